-- R40, R41: schedules as durable state. One row per schedule declared in code (upserted by
-- name when an engine starts); a scheduler claims due rows with FOR UPDATE SKIP LOCKED and, in
-- the same transaction, submits the tick's workflow and advances next_tick_at.
create table causeway_schedules (
  name text primary key,
  workflow_name text not null,
  cron text not null,
  -- The IANA time zone the cron is read in; the cron library computes the ticks in it.
  timezone text not null,
  catch_up text not null check (catch_up in ('latest', 'all', 'none')),
  input jsonb not null,
  -- Null when the cron has no tick left.
  next_tick_at timestamptz,
  last_tick_at timestamptz,
  -- No foreign key to causeway_workflows (as the log has none since 0007): workflow rows are
  -- never deleted, and a truncate of them for tests must not reach this table's history.
  last_workflow_id uuid,
  -- An operator's pause (R41): who, why and when, all three or none; kept when code changes.
  paused_at timestamptz,
  paused_by text,
  paused_reason text,
  check ((paused_at is null) = (paused_by is null) and (paused_at is null) = (paused_reason is null)),
  created_at timestamptz not null,
  updated_at timestamptz not null
);
-- The scheduler's question: which running schedules are due.
create index causeway_schedules_due on causeway_schedules (next_tick_at) where paused_at is null;

-- The operators' history of each schedule (R41): pauses, resumes and triggers, who and why.
create table causeway_schedule_events (
  id bigint generated always as identity primary key,
  schedule_name text not null references causeway_schedules (name),
  kind text not null check (kind in ('paused', 'resumed', 'triggered')),
  operator text not null,
  reason text not null,
  -- The workflow a trigger submitted (no foreign key, as above).
  workflow_id uuid,
  at timestamptz not null
);
create index causeway_schedule_events_schedule on causeway_schedule_events (schedule_name, id);

-- Like the transition log, the history is append-only.
create function causeway_schedule_events_append_only() returns trigger
language plpgsql
as $$
begin
  raise exception 'causeway_schedule_events is append-only: % is not allowed', tg_op
    using errcode = 'insufficient_privilege';
end
$$;
create trigger causeway_schedule_events_no_update_delete
  before update or delete on causeway_schedule_events
  for each row execute function causeway_schedule_events_append_only();
create trigger causeway_schedule_events_no_truncate
  before truncate on causeway_schedule_events
  for each statement execute function causeway_schedule_events_append_only();
