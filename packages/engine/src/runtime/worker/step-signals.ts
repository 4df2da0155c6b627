/**
 * Why a step's signal was aborted, and the errors the step context throws. The executor
 * reads the abort reason to choose the event it reports.
 */
export const abortReasons = [
  'attempt_timeout',
  'deadline',
  'lease_lost',
  'cancel_requested',
  'shutdown',
] as const;
export type AbortReason = (typeof abortReasons)[number];

export class StepAbort extends Error {
  override readonly name = 'StepAbort';
  constructor(readonly reason: AbortReason) {
    super(`step aborted: ${reason.replaceAll('_', ' ')}`);
  }
}

/** Thrown by `ctx.boundary()` / `ctx.checkpoint()` once a pending cancel is confirmed. */
export class CancelConfirmed extends Error {
  override readonly name = 'CancelConfirmed';
  constructor() {
    super('the cancel was confirmed at a side-effect boundary: stop without further effects');
  }
}

/** Thrown by the step context when this claim no longer holds the lease (R7, R9). */
export class LeaseLost extends Error {
  override readonly name = 'LeaseLost';
  constructor() {
    super('the lease of this attempt was lost: stop without further effects');
  }
}
