-- Less work per edge (BENCHMARKS.md, "Where the time goes"). Every edge writes a task row, a
-- log row and often the workflow row; each index and foreign key on them costs on every one.

-- The log's rows are written only by the engine's decision statements, in the same statement
-- that writes (or after the statement that inserted) the rows they name, and are never
-- deleted; the two foreign-key checks per log row were a quarter of a submit's server time.
alter table causeway_transitions drop constraint causeway_transitions_workflow_id_fkey;
alter table causeway_transitions drop constraint causeway_transitions_task_id_fkey;

-- The same holds for tasks: the submission statement inserts them with their workflow (only
-- for a workflow row it inserted), and neither is ever deleted.
alter table causeway_tasks drop constraint causeway_tasks_workflow_id_fkey;

-- A task's history is read through its workflow's index (a workflow has a handful of tasks).
drop index causeway_transitions_task;

-- HOT updates for workflows: their state changes on most edges, and no index may hold a column
-- an update changes for the update to stay on its page without new index entries. Listing
-- by state now walks causeway_workflows_created and filters.
drop index causeway_workflows_state_created;
alter table causeway_workflows set (fillfactor = 70);

-- Most submits have no idempotency key; they need no entry in the key index.
drop index causeway_workflows_idempotency;
create unique index causeway_workflows_idempotency on causeway_workflows (name, idempotency_key)
  where idempotency_key is not null;
