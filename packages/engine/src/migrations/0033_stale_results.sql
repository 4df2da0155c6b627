-- R56: the attempt ledger. Every claim of a task is an attempt, read off the transition log
-- (its `lease_acquired` row and the edge that released the lease); what the log does not hold
-- is a result that came after its claim's lease was lost and was refused (R7). Each such
-- refusal is one row here, written in the transaction that refused it: the claim it was fenced
-- on (task, lease epoch, holder) and the database time of the refusal. No foreign keys, like
-- the log: retention removes the rows with their workflow (workflow-delete-batch.ts).
create table causeway_stale_results (
  task_id uuid not null,
  workflow_id uuid not null,
  lease_epoch bigint not null,
  holder text not null,
  refused_at timestamptz not null,
  primary key (task_id, lease_epoch, holder)
);
-- Readers ask by workflow (a workflow's tasks, a page of workflows), and so does retention.
create index causeway_stale_results_workflow on causeway_stale_results (workflow_id);

-- Append-only like the events (0013, 0022): a DELETE passes only in a retention run.
create trigger causeway_stale_results_no_update_delete
  before update or delete on causeway_stale_results
  for each row execute function causeway_events_append_only();
create trigger causeway_stale_results_no_truncate
  before truncate on causeway_stale_results
  for each statement execute function causeway_events_append_only();
