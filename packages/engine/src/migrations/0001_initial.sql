-- Causeway's initial schema. Forward-only; the Migrator runs each file in one transaction
-- under an advisory lock. State columns are text with CHECKs that mirror the TypeScript
-- arrays in @causeway/workflow (a test keeps them equal).

-- R11: every time comparison uses the database clock through causeway_now(). The offset
-- exists only so tests can move database time; it is 0 in production.
create table causeway_clock (
  singleton boolean primary key default true check (singleton),
  offset_ms bigint not null default 0
);
insert into causeway_clock default values;

create function causeway_now() returns timestamptz
language sql stable
as $$ select now() + (select offset_ms from causeway_clock) * interval '1 millisecond' $$;

create table causeway_workflows (
  id uuid primary key,
  name text not null,
  state text not null check (state in (
    'queued', 'running', 'cancel_requested', 'succeeded', 'cancelled', 'dead')),
  input jsonb not null,
  idempotency_key text,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
-- R2: one workflow per (name, key); concurrent submits with the same key wait on this index.
create unique index causeway_workflows_idempotency on causeway_workflows (name, idempotency_key);
create index causeway_workflows_created on causeway_workflows (created_at, id);
create index causeway_workflows_state_created on causeway_workflows (state, created_at, id);

create table causeway_tasks (
  id uuid primary key,
  workflow_id uuid not null references causeway_workflows (id),
  step text not null,
  queue text not null,
  state text not null check (state in (
    'pending', 'queued', 'leased', 'awaiting_receipt', 'cancel_requested',
    'succeeded', 'cancelled', 'dead')),
  attempt integer not null default 0 check (attempt >= 0),
  max_attempts integer not null check (max_attempts >= 1),
  replay_count integer not null default 0,
  run_at timestamptz,
  deadline_at timestamptz,
  -- R7: holder = host/pid/boot id; the epoch grows on every claim and fences every write.
  lease_holder text,
  lease_epoch bigint not null default 0,
  lease_expires_at timestamptz,
  -- R10: the current attempt persisted "effect started" (boundary or checkpoint).
  effect_started boolean not null default false,
  checkpoints jsonb not null default '{}'::jsonb,
  progress jsonb,
  output jsonb,
  receipt_id text,
  receipt_deadline_at timestamptz,
  last_error_category text check (last_error_category in (
    'timeout', 'throttled', 'network', 'unavailable', 'db_conflict',
    'invalid_argument', 'not_found', 'unauthorized', 'conflict', 'unknown')),
  last_error text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  unique (workflow_id, step)
);
-- The claim query's index: only ready rows, so its cost does not grow with finished rows.
create index causeway_tasks_ready on causeway_tasks (queue, run_at) where state = 'queued';
create index causeway_tasks_lease_expiry on causeway_tasks (lease_expires_at)
  where state in ('leased', 'cancel_requested');
create index causeway_tasks_receipt_deadline on causeway_tasks (receipt_deadline_at)
  where state = 'awaiting_receipt';
create index causeway_tasks_queued_deadline on causeway_tasks (deadline_at)
  where state = 'queued' and deadline_at is not null;
create index causeway_tasks_dead on causeway_tasks (updated_at) where state = 'dead';

-- R24: the append-only transition log. Task rows carry task id and step; workflow rows don't.
create table causeway_transitions (
  id bigint generated always as identity primary key,
  workflow_id uuid not null references causeway_workflows (id),
  task_id uuid references causeway_tasks (id),
  step text,
  from_state text,
  to_state text not null,
  reason text not null check (reason in (
    'submitted', 'upstream_succeeded', 'cancelled_before_start', 'lease_acquired',
    'deadline_exceeded_before_start', 'completed', 'retry_scheduled', 'lease_expired',
    'worker_shutdown', 'non_retryable_error', 'attempts_exhausted',
    'lease_expired_effect_uncertain', 'deadline_exceeded', 'submitted_awaiting_receipt',
    'cancel_requested', 'cancel_confirmed', 'cancel_after_submit', 'receipt_confirmed',
    'receipt_rejected', 'receipt_timeout', 'manual_replay', 'bulk_requeue')),
  error_category text,
  error_summary text,
  actor text not null,
  attempt integer not null,
  at timestamptz not null,
  detail jsonb
);
create index causeway_transitions_workflow on causeway_transitions (workflow_id, id);
create index causeway_transitions_task on causeway_transitions (task_id, id);

-- Rows are never updated or deleted: a mistake is corrected by appending a row.
create function causeway_transitions_append_only() returns trigger
language plpgsql
as $$
begin
  raise exception 'causeway_transitions is append-only: % is not allowed', tg_op
    using errcode = 'insufficient_privilege';
end
$$;
create trigger causeway_transitions_no_update_delete
  before update or delete on causeway_transitions
  for each row execute function causeway_transitions_append_only();
create trigger causeway_transitions_no_truncate
  before truncate on causeway_transitions
  for each statement execute function causeway_transitions_append_only();
