-- R52: debounce. A debounced submit supersedes a workflow of the same definition and key that
-- has not started: its tasks end `cancelled` (`superseded`). The surviving workflow keeps the
-- key, the start of its burst (carried from the workflow it superseded) and the quiet and
-- max-wait times of its definition, so the next submit of the burst reads them from the row,
-- not from the call. The CHECK mirrors machine-table.ts; NOT VALID because it only widens.
alter table causeway_transitions drop constraint causeway_transitions_reason_check;
alter table causeway_transitions add constraint causeway_transitions_reason_check check (reason in (
  'submitted', 'upstream_succeeded', 'cancelled_before_start', 'lease_acquired',
  'deadline_exceeded_before_start', 'completed', 'retry_scheduled', 'lease_expired',
  'worker_shutdown', 'non_retryable_error', 'attempts_exhausted',
  'lease_expired_effect_uncertain', 'deadline_exceeded', 'submitted_awaiting_receipt',
  'cancel_requested', 'cancel_confirmed', 'cancel_after_submit', 'receipt_confirmed',
  'receipt_rejected', 'receipt_timeout', 'manual_replay', 'bulk_requeue', 'snoozed',
  'event_awaited', 'event_received', 'event_timeout', 'cancelled_while_waiting',
  'step_input_failed', 'children_started', 'children_succeeded', 'children_failed',
  'children_cancelled', 'superseded')) not valid;

alter table causeway_workflows
  add column debounce_key text,
  add column debounce_burst_started_at timestamptz,
  add column debounce_quiet_ms integer,
  add column debounce_max_wait_ms integer;

-- The next submit of a key finds the key's workflows here. The index leaves `state` out so that
-- a decision's update of a workflow stays HOT: each key holds one row per burst (the superseded
-- ones and the one that started), until retention removes them.
create index causeway_workflows_debounce_idx on causeway_workflows (name, debounce_key)
  where debounce_key is not null;
