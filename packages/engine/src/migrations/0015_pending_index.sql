-- The metrics count the tasks of each live state by queue (docs/metrics.md) through a partial
-- index per state, so a scrape costs the live tasks, not the finished ones. Every other live
-- state has one already (ready, lease expiry, receipt deadline, waiting); `pending` had none.
-- An entry is written only when a task enters `pending` (at submit, for a step with upstream
-- steps), never for a finished row, and `state` is already in other indexes' predicates, so
-- no update that was HOT stops being so.
create index causeway_tasks_pending on causeway_tasks (queue) where state = 'pending';
