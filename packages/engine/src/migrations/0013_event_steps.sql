-- R37–R39: event steps. A task `waiting` for its event holds no lease; its row names the event
-- (name, key: computed when the wait starts) and when the wait began and gives up. The CHECKs
-- mirror machine-table.ts. NOT VALID where a constraint only widens: existing rows were
-- checked by the narrower one, so the tables are not scanned again.
alter table causeway_tasks drop constraint causeway_tasks_state_check;
alter table causeway_tasks add constraint causeway_tasks_state_check check (state in (
  'pending', 'queued', 'leased', 'awaiting_receipt', 'waiting', 'cancel_requested',
  'succeeded', 'cancelled', 'dead')) not valid;
alter table causeway_workflows drop constraint causeway_workflows_state_check;
alter table causeway_workflows add constraint causeway_workflows_state_check check (state in (
  'queued', 'running', 'waiting', 'cancel_requested', 'succeeded', 'cancelled', 'dead')) not valid;
alter table causeway_transitions drop constraint causeway_transitions_reason_check;
alter table causeway_transitions add constraint causeway_transitions_reason_check check (reason in (
  'submitted', 'upstream_succeeded', 'cancelled_before_start', 'lease_acquired',
  'deadline_exceeded_before_start', 'completed', 'retry_scheduled', 'lease_expired',
  'worker_shutdown', 'non_retryable_error', 'attempts_exhausted',
  'lease_expired_effect_uncertain', 'deadline_exceeded', 'submitted_awaiting_receipt',
  'cancel_requested', 'cancel_confirmed', 'cancel_after_submit', 'receipt_confirmed',
  'receipt_rejected', 'receipt_timeout', 'manual_replay', 'bulk_requeue', 'snoozed',
  'event_awaited', 'event_received', 'event_timeout', 'cancelled_while_waiting')) not valid;

alter table causeway_tasks
  add column event_name text,
  add column event_key text,
  add column wait_since timestamptz,
  add column wait_timeout_at timestamptz,
  -- The wait columns are set exactly while the task waits (the edges' `wait` effect); the key
  -- is null when the step's key function failed (the edge's detail says why).
  add constraint causeway_tasks_wait_check check (
    (state = 'waiting') = (wait_since is not null)
    and (wait_since is null) = (wait_timeout_at is null)
    and (wait_since is null) = (event_name is null)
    and (event_key is null or wait_since is not null));

-- sendEvent's question: who waits for (name, key).
create index causeway_tasks_waiting on causeway_tasks (event_name, event_key)
  where state = 'waiting';
-- The sweeper's questions: whose wait gave up, and whose deadline passed while waiting.
create index causeway_tasks_wait_timeout on causeway_tasks (wait_timeout_at)
  where state = 'waiting';
create index causeway_tasks_waiting_deadline on causeway_tasks (deadline_at)
  where state = 'waiting' and deadline_at is not null;

-- R38: every event sent, kept for waiters that start waiting later. `received_at` is the
-- database time of the statement that stored it, taken under the (name, key) lock that a wait
-- takes to look for earlier events, so the two never miss each other.
create table causeway_events (
  id uuid primary key,
  name text not null,
  key text not null,
  payload jsonb not null,
  idempotency_key text,
  sent_by text not null,
  received_at timestamptz not null
);
create unique index causeway_events_idempotency on causeway_events (name, idempotency_key)
  where idempotency_key is not null;
-- A wait's question: the first event of (name, key) since its workflow was accepted.
create index causeway_events_match on causeway_events (name, key, received_at, id);

-- Which event completed which task: at its send, or when a later wait found it.
create table causeway_event_deliveries (
  event_id uuid not null references causeway_events (id),
  task_id uuid not null,
  workflow_id uuid not null,
  delivered_at timestamptz not null,
  primary key (event_id, task_id)
);
create index causeway_event_deliveries_task on causeway_event_deliveries (task_id);

-- Like the transition log, events and deliveries are append-only.
create function causeway_events_append_only() returns trigger
language plpgsql
as $$
begin
  raise exception '% is append-only: % is not allowed', tg_table_name, tg_op
    using errcode = 'insufficient_privilege';
end
$$;
create trigger causeway_events_no_update_delete
  before update or delete on causeway_events
  for each row execute function causeway_events_append_only();
create trigger causeway_events_no_truncate
  before truncate on causeway_events
  for each statement execute function causeway_events_append_only();
create trigger causeway_event_deliveries_no_update_delete
  before update or delete on causeway_event_deliveries
  for each row execute function causeway_events_append_only();
create trigger causeway_event_deliveries_no_truncate
  before truncate on causeway_event_deliveries
  for each statement execute function causeway_events_append_only();
