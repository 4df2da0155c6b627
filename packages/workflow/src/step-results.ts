import { StepError } from './step-error';

/**
 * What a step's `run` may return besides a plain output: a request to wait for a receipt
 * (R23), a message for the transactional outbox (R22), or a snooze (R36). Plain frozen data, tagged by a
 * symbol so that no user output can be mistaken for one.
 */
const stepResultTag: unique symbol = Symbol.for('causeway.step-result');

export interface AwaitReceipt {
  readonly [stepResultTag]: 'await_receipt';
  readonly kind: 'await_receipt';
  /** The external system's id for the accepted submission. */
  readonly receiptId: string;
  /** How long to wait for the receipt before `receipt_timeout`. */
  readonly timeoutMs: number;
}

export interface SendRequest {
  readonly [stepResultTag]: 'send';
  readonly kind: 'send';
  readonly channel: string;
  readonly payload: unknown;
}

export interface SnoozeRequest {
  readonly [stepResultTag]: 'snooze';
  readonly kind: 'snooze';
  /** Run again this long after the snooze is written (database time)… */
  readonly forMs: number | null;
  /** …or at this absolute time (epoch milliseconds). */
  readonly untilMs: number | null;
  /** Why, in the step's words: kept on the edge and shown by `explain`. */
  readonly reason: string;
}

/** The longest a step may snooze, and how far in the past an `untilMs` may lie (clock skew). */
export const snoozeLimits = Object.freeze({
  maxMs: 366 * 24 * 3_600_000,
  pastToleranceMs: 5 * 60_000,
  maxReasonLength: 500,
});

/**
 * Run this step again later (R36): the lease is released, the task is `queued` until then
 * (`snoozed`), its checkpoints are kept and the attempt is not counted against `maxAttempts`.
 * Give `forMs` or `untilMs` (epoch ms), and a reason. A snooze past the workflow's deadline
 * ends the task `dead` (`deadline_exceeded`) instead. Bad arguments throw a
 * `StepError('invalid_argument')`, which fails the attempt for good; an `untilMs` too far in
 * the past or ahead by the database's clock (R11) does the same when the snooze is settled.
 */
export function snooze(
  options:
    | { readonly forMs: number; readonly reason: string }
    | { readonly untilMs: number; readonly reason: string },
): SnoozeRequest {
  const forMs = 'forMs' in options ? options.forMs : null;
  const untilMs = 'untilMs' in options ? options.untilMs : null;
  const problem = snoozeProblem(forMs, untilMs, options.reason);
  if (problem !== null) throw new StepError('invalid_argument', `snooze: ${problem}`);
  return Object.freeze({
    [stepResultTag]: 'snooze' as const,
    kind: 'snooze' as const,
    forMs,
    untilMs,
    reason: options.reason.trim(),
  });
}

/**
 * What is wrong with a snooze's arguments, or null. Where `untilMs` lies from now is for the
 * database's clock to say, when the snooze is settled (`snoozeUntilProblem`).
 */
export function snoozeProblem(
  forMs: number | null,
  untilMs: number | null,
  reason: unknown,
): string | null {
  if ((forMs === null) === (untilMs === null)) return 'give exactly one of forMs and untilMs';
  if (typeof reason !== 'string' || reason.trim() === '') return 'a reason is required';
  if (reason.length > snoozeLimits.maxReasonLength) {
    return `the reason is over ${snoozeLimits.maxReasonLength} characters`;
  }
  if (forMs !== null && (!Number.isInteger(forMs) || forMs < 1 || forMs > snoozeLimits.maxMs)) {
    return `forMs must be an integer from 1 to ${snoozeLimits.maxMs}, got ${forMs}`;
  }
  if (untilMs !== null && !Number.isInteger(untilMs)) {
    return `untilMs must be an integer (epoch ms), got ${untilMs}`;
  }
  return null;
}

/**
 * What is wrong with a snooze's `untilMs` at database time `nowMs` (R11), or null: not in the
 * past beyond the tolerance, nor beyond the limit ahead.
 */
export function snoozeUntilProblem(untilMs: number, nowMs: number): string | null {
  const { maxMs, pastToleranceMs } = snoozeLimits;
  const until = new Date(untilMs).toISOString();
  const now = new Date(nowMs).toISOString();
  if (untilMs < nowMs - pastToleranceMs) {
    return `untilMs ${until} is in the past: more than ${pastToleranceMs} ms before the database time ${now}`;
  }
  if (untilMs > nowMs + maxMs) {
    return `untilMs ${until} is more than ${maxMs} ms after the database time ${now}`;
  }
  return null;
}

/** The step's effect was accepted; release the lease and wait for the receipt. */
export function awaitReceipt(options: { receiptId: string; timeoutMs: number }): AwaitReceipt {
  if (options.receiptId.length === 0) throw new TypeError('awaitReceipt: receiptId is empty');
  if (!Number.isInteger(options.timeoutMs) || options.timeoutMs <= 0) {
    throw new RangeError(
      `awaitReceipt: timeoutMs must be a positive integer, got ${options.timeoutMs}`,
    );
  }
  return Object.freeze({
    [stepResultTag]: 'await_receipt' as const,
    kind: 'await_receipt' as const,
    receiptId: options.receiptId,
    timeoutMs: options.timeoutMs,
  });
}

/** Send `payload` on `channel` through the outbox, after the step's edge commits. */
export function send(channel: string, payload: unknown): SendRequest {
  if (channel.length === 0) throw new TypeError('send: channel is empty');
  return Object.freeze({
    [stepResultTag]: 'send' as const,
    kind: 'send' as const,
    channel,
    payload,
  });
}

export function isAwaitReceipt(value: unknown): value is AwaitReceipt {
  return isTagged(value, 'await_receipt');
}

export function isSendRequest(value: unknown): value is SendRequest {
  return isTagged(value, 'send');
}

export function isSnooze(value: unknown): value is SnoozeRequest {
  return isTagged(value, 'snooze');
}

function isTagged(value: unknown, tag: string): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[stepResultTag] === tag
  );
}
