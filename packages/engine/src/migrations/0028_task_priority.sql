-- Priority (R49): seconds of backlog a task may jump in its queue. It lives in a column of its
-- own, and the claim orders by `run_at − priority`, so everything that sets run_at (submits,
-- retries, snoozes, promotions, replays) keeps the task's place without knowing of priority.
alter table causeway_tasks
  add column priority integer not null default 0
    constraint causeway_tasks_priority_range check (priority between -86400 and 86400);

-- The claim's order: run_at moved earlier by the priority. `timestamptz - interval` is only
-- STABLE because an interval's days and months depend on the time zone (a day across a DST
-- change is 23 or 25 hours); an interval of seconds alone is a fixed number of microseconds
-- whatever the zone, so this shift is IMMUTABLE and may key an index. The claim writes the
-- same call as the index, so the planner walks the index in this order.
create function causeway_claim_at(run_at timestamptz, priority integer) returns timestamptz
  language sql immutable parallel safe strict
  return run_at - make_interval(secs => priority);

-- The claim's partial index on ready rows, now in claim order. run_at is a key column too: a
-- claim's `run_at <= now` is checked inside the index, so a task not yet due (one whose
-- priority puts it ahead) costs no visit to the table.
drop index causeway_tasks_ready;
create index causeway_tasks_ready on causeway_tasks
  (queue, causeway_claim_at(run_at, priority), run_at) where state = 'queued';
