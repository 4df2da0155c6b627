-- R54: a workflow records the version of the definition it was accepted under (the
-- definition's `version`, or a digest of its shape). Only an engine that defines that version
-- claims, sweeps or decides for it; the claim reads the column through the workflow's primary
-- key, as it already reads `steps`. Null for workflows stored before this migration: those are
-- judged by their `steps` against each name's latest version, as before.
--
-- No index: `definitions` counts the workflows in flight through the live tasks' partial
-- indexes, and an index holding `version` would add an entry to every submit for nothing.
alter table causeway_workflows add column version text;

-- Every version a worker ever served, so `definitions` still lists a version as `drained` once
-- its last worker is gone and its last workflow finished (safe to delete from the code).
-- Written with the worker registry row (worker start and stop), never on the claim or settle
-- path; one row per (name, version), so it grows with deploys, not with work.
create table causeway_workflow_versions (
  name text not null,
  version text not null,
  first_served_at timestamptz not null,
  last_served_at timestamptz not null,
  primary key (name, version)
);
