-- R55: searchable attributes. A workflow's attributes (at most 16 keys of strings, numbers or
-- booleans, fixed at admission) are kept on its row for reading, null when it has none, and
-- once more as one row per attribute for finding: a page of the workflows with
-- `tenant = "acme"` walks the primary key of causeway_workflow_attributes from
-- (term, newest created_at) and stops after the page, where a GIN index on the jsonb column
-- finds the rows but a common value then sorts every one of them before the first page.
-- A workflow without attributes writes nothing here, and keeps its updates HOT (no new
-- indexed column on causeway_workflows).
alter table causeway_workflows add column attributes jsonb;

-- One term per attribute: the key, '=', and the value as jsonb text, so its type is part of it
-- (the string "5" is `k="5"`, the number 5 is `k=5`). Inserts, filters and retention make terms
-- with this one function, from jsonb, so they always agree.
create function causeway_attribute_term(key text, value jsonb) returns text
  language sql immutable parallel safe
  return key || '=' || value::text;

-- created_at is the workflow's: a page is in the workflows' (created_at, id) order. Retention
-- deletes a workflow's rows by their terms, made again from its attributes, through the key.
create table causeway_workflow_attributes (
  term text not null,
  created_at timestamptz not null,
  workflow_id uuid not null,
  primary key (term, created_at, workflow_id)
);
