-- Lists at scale (docs/rules.md, the workflows query): a page of workflows in a rare state
-- (the on-call states `dead` and `cancel_requested`, and `cancelled`) reads an index that holds
-- only those rows, newest or oldest first, however long the finished history is.
--
-- Not an index on `state`, not even a partial one: PostgreSQL keeps an update HOT only when it
-- changes no indexed column, and the columns of an index's predicate count too (PostgreSQL 15
-- and 18 alike; only summarizing indexes such as BRIN are exempt since 16). Every edge that
-- changes a workflow's state (queued → running → succeeded) would then write new entries in
-- every index of the table. `rare_state` is computed from `state` but changes only when a
-- workflow enters or leaves a rare state: on the hot path it stays null, the update compares
-- it equal and stays HOT. Adding the column rewrites the table once.
alter table causeway_workflows
  add column rare_state text generated always as (
    case when state in ('cancel_requested', 'cancelled', 'dead') then state end) stored;
create index causeway_workflows_rare_state on causeway_workflows (rare_state, created_at, id)
  where rare_state is not null;
