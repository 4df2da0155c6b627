-- R58: `pending → dead` (`step_input_failed`), when a function the engine evaluates for a step
-- (an event step's key) throws or gives an invalid value. The CHECK mirrors machine-table.ts.
-- NOT VALID: it only widens, and the rows already in the log were checked by the narrower one,
-- so the log is not scanned again (day partitions made later copy it, checked).
alter table causeway_transitions drop constraint causeway_transitions_reason_check;
alter table causeway_transitions add constraint causeway_transitions_reason_check check (reason in (
  'submitted', 'upstream_succeeded', 'cancelled_before_start', 'lease_acquired',
  'deadline_exceeded_before_start', 'completed', 'retry_scheduled', 'lease_expired',
  'worker_shutdown', 'non_retryable_error', 'attempts_exhausted',
  'lease_expired_effect_uncertain', 'deadline_exceeded', 'submitted_awaiting_receipt',
  'cancel_requested', 'cancel_confirmed', 'cancel_after_submit', 'receipt_confirmed',
  'receipt_rejected', 'receipt_timeout', 'manual_replay', 'bulk_requeue', 'snoozed',
  'event_awaited', 'event_received', 'event_timeout', 'cancelled_while_waiting',
  'step_input_failed')) not valid;
