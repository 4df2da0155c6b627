-- R36: a step may snooze (leased → queued with reason `snoozed`). The CHECK mirrors the
-- reason codes of machine-table.ts. NOT VALID: the rows already in the log were checked by the
-- narrower constraint, so the log is not scanned again.
alter table causeway_transitions drop constraint causeway_transitions_reason_check;
alter table causeway_transitions add constraint causeway_transitions_reason_check check (reason in (
  'submitted', 'upstream_succeeded', 'cancelled_before_start', 'lease_acquired',
  'deadline_exceeded_before_start', 'completed', 'retry_scheduled', 'lease_expired',
  'worker_shutdown', 'non_retryable_error', 'attempts_exhausted',
  'lease_expired_effect_uncertain', 'deadline_exceeded', 'submitted_awaiting_receipt',
  'cancel_requested', 'cancel_confirmed', 'cancel_after_submit', 'receipt_confirmed',
  'receipt_rejected', 'receipt_timeout', 'manual_replay', 'bulk_requeue', 'snoozed')) not valid;
