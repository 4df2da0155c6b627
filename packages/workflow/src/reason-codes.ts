/**
 * Reason codes (docs/state-machine.md). A published contract: one meaning each, forever (R24).
 * Never reuse a code for a new meaning; add a new one.
 */
export const reasonCodes = [
  'submitted',
  'upstream_succeeded',
  'cancelled_before_start',
  'lease_acquired',
  'deadline_exceeded_before_start',
  'completed',
  'retry_scheduled',
  'lease_expired',
  'worker_shutdown',
  'non_retryable_error',
  'attempts_exhausted',
  'lease_expired_effect_uncertain',
  'deadline_exceeded',
  'submitted_awaiting_receipt',
  'cancel_requested',
  'cancel_confirmed',
  'cancel_after_submit',
  'receipt_confirmed',
  'receipt_rejected',
  'receipt_timeout',
  'manual_replay',
  'bulk_requeue',
] as const;
export type ReasonCode = (typeof reasonCodes)[number];

/** One-line meaning of each reason code, used by the generated docs and by `explain`. */
export const reasonCodeMeanings: Readonly<Record<ReasonCode, string>> = Object.freeze({
  submitted: 'accepted at admission (attempt 0, run now or after upstream steps)',
  upstream_succeeded: 'every upstream step succeeded; the task became ready',
  cancelled_before_start: 'cancelled before any worker took it',
  lease_acquired: 'a worker claimed the task and holds its lease',
  deadline_exceeded_before_start: 'the absolute deadline passed before the task started',
  completed: 'the step finished and its effect is confirmed',
  retry_scheduled: 'the attempt failed with a retryable error; the next attempt waits for run_at',
  lease_expired: 'the lease ran out with no effect at risk; safe to run again or to stop',
  worker_shutdown: 'the worker shut down and released the task before any side effect',
  non_retryable_error: 'the attempt failed with an error category that is never retried',
  attempts_exhausted: 'the last allowed attempt failed',
  lease_expired_effect_uncertain:
    'the lease ran out after a non-reentrant step started its effect: a human must check',
  deadline_exceeded: 'the absolute deadline passed while the task was running or waiting',
  submitted_awaiting_receipt: 'the external submission was accepted; waiting for its receipt',
  cancel_requested: 'a caller asked to stop a running task; the worker must confirm',
  cancel_confirmed: 'the worker confirmed at a side-effect boundary that nothing more will happen',
  cancel_after_submit: 'the cancel came too late: the effect had already been submitted',
  receipt_confirmed: 'the receipt confirmed the external effect',
  receipt_rejected: 'the receipt reported a failure of the external effect',
  receipt_timeout: 'no receipt arrived before its deadline',
  manual_replay: 'an operator replayed a dead task',
  bulk_requeue: 'an operator requeued dead tasks in bulk by reason code and time range',
});
