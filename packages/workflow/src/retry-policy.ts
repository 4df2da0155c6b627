import type { ErrorCategory } from './error-categories';

/**
 * Per-step retry policy (R18, R28): attempts, exponential backoff with full jitter and a cap,
 * reentrancy, attempt timeout and an optional absolute deadline. Pure: `now` and `random`
 * are parameters, so every decision is reproducible in tests.
 */

/** Exponential backoff with Temporal's well-known names. */
export interface BackoffPolicy {
  /** Ceiling of the first retry's delay. */
  readonly initialIntervalMs: number;
  /** Growth of the ceiling per attempt (>= 1). */
  readonly backoffCoefficient: number;
  /** Cap of the ceiling. */
  readonly maximumIntervalMs: number;
}

export interface RetryPolicy {
  /** Attempts allowed in one replay round (the first run is attempt 1). */
  readonly maxAttempts: number;
  readonly backoff: BackoffPolicy;
  /** Running the step twice has the effect of running it once (safe to re-run after a crash). */
  readonly reentrant: boolean;
  /** Per-attempt timeout, counted from the worker's start of the attempt (R28). */
  readonly timeoutMs: number;
  /** Optional absolute deadline, counted from the workflow's acceptance (R28, R29). */
  readonly deadlineMs: number | null;
  /** How long the step waits after it became ready before it is queued (R36); null: none. */
  readonly delayMs: number | null;
  /** An event step's wait (R37, R39); null for a step that runs code. */
  readonly wait: WaitPolicy | null;
  /** A map step (R44): it runs no code and starts one child workflow per element when ready. */
  readonly map: boolean;
}

/** What the machine needs to know of an event step. */
export interface WaitPolicy {
  /** How long a wait lasts from entering `waiting` before the sweeper ends it. */
  readonly timeoutMs: number;
  /** The step declares `onTimeout`: a timed-out wait succeeds with it instead of dying. */
  readonly succeedsOnTimeout: boolean;
}

export const defaultBackoff: BackoffPolicy = Object.freeze({
  initialIntervalMs: 1_000,
  backoffCoefficient: 2,
  maximumIntervalMs: 300_000,
});

export const defaultRetryPolicy: RetryPolicy = Object.freeze({
  maxAttempts: 5,
  backoff: defaultBackoff,
  reentrant: false,
  timeoutMs: 300_000,
  deadlineMs: null,
  delayMs: null,
  wait: null,
  map: false,
});

/** Bounds that a definition must respect; outside them it is refused at definition time. */
export const retryPolicyLimits = Object.freeze({
  maxAttempts: { min: 1, max: 1_000 },
  intervalMs: { min: 0, max: 30 * 24 * 3_600_000 },
  backoffCoefficient: { min: 1, max: 100 },
  timeoutMs: { min: 1, max: 7 * 24 * 3_600_000 },
  deadlineMs: { min: 1, max: 366 * 24 * 3_600_000 },
  delayMs: { min: 1, max: 366 * 24 * 3_600_000 },
});

/**
 * Delay before retrying after the `attempt`-th attempt failed (attempt >= 1): full jitter,
 * `random() * min(maximumInterval, initialInterval * coefficient^(attempt-1))`, rounded down.
 * Full jitter spreads a failing batch over the whole window instead of waking it at once.
 */
export function backoffDelayMs(
  attempt: number,
  backoff: BackoffPolicy,
  random: () => number,
): number {
  const exponent = Math.max(0, attempt - 1);
  const ceiling = Math.min(
    backoff.maximumIntervalMs,
    backoff.initialIntervalMs * backoff.backoffCoefficient ** exponent,
  );
  const sample = random();
  if (!(sample >= 0 && sample < 1)) {
    throw new RangeError(`random() must return a number in [0, 1), got ${sample}`);
  }
  return Math.floor(sample * ceiling);
}

/**
 * When the next attempt may start: `now` plus `minimumDelayMs` (a platform's Retry-After)
 * plus the jittered backoff. The jitter goes on top of Retry-After, not under it: a storm
 * told "retry after 1 s" must not all come back in the same instant one second later.
 */
export function nextRunAt(
  attempt: number,
  backoff: BackoffPolicy,
  now: Date,
  random: () => number,
  minimumDelayMs = 0,
): Date {
  const delay = minimumDelayMs + backoffDelayMs(attempt, backoff, random);
  return new Date(now.getTime() + delay);
}

/**
 * When a failed attempt's retry may start, given the wait the step asked for (R51). A
 * `throttled` error with `retryAfterMs` is retried at exactly `now + retryAfterMs`, instead
 * of the backoff: the platform said when it has room, and a backoff on top would only waste
 * the slot it announced. Every other category (and `throttled` without a wait) keeps the
 * backoff, with the asked wait as its floor (`nextRunAt`): such a wait is a hint of when the
 * platform may be back, and a failing batch must not all come back in the same instant.
 */
export function retryRunAt(
  attempt: number,
  backoff: BackoffPolicy,
  now: Date,
  random: () => number,
  category: ErrorCategory,
  retryAfterMs: number | undefined,
): Date {
  if (category === 'throttled' && retryAfterMs !== undefined) {
    return new Date(now.getTime() + retryAfterMs);
  }
  return nextRunAt(attempt, backoff, now, random, retryAfterMs ?? 0);
}

/** Problems with a policy, as readable sentences; empty when the policy is valid. */
export function retryPolicyProblems(policy: RetryPolicy): string[] {
  const problems: string[] = [];
  const limits = retryPolicyLimits;
  const checkInteger = (label: string, value: number, min: number, max: number) => {
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${label} must be an integer from ${min} to ${max}, got ${value}`);
    }
  };
  checkInteger('maxAttempts', policy.maxAttempts, limits.maxAttempts.min, limits.maxAttempts.max);
  checkInteger(
    'backoff.initialIntervalMs',
    policy.backoff.initialIntervalMs,
    limits.intervalMs.min,
    limits.intervalMs.max,
  );
  checkInteger(
    'backoff.maximumIntervalMs',
    policy.backoff.maximumIntervalMs,
    limits.intervalMs.min,
    limits.intervalMs.max,
  );
  const coefficient = policy.backoff.backoffCoefficient;
  if (
    !Number.isFinite(coefficient) ||
    coefficient < limits.backoffCoefficient.min ||
    coefficient > limits.backoffCoefficient.max
  ) {
    problems.push(
      `backoff.backoffCoefficient must be a number from ${limits.backoffCoefficient.min} to ${limits.backoffCoefficient.max}, got ${coefficient}`,
    );
  }
  if (policy.backoff.maximumIntervalMs < policy.backoff.initialIntervalMs) {
    problems.push(
      `backoff.maximumIntervalMs (${policy.backoff.maximumIntervalMs}) must not be below backoff.initialIntervalMs (${policy.backoff.initialIntervalMs})`,
    );
  }
  checkInteger('timeoutMs', policy.timeoutMs, limits.timeoutMs.min, limits.timeoutMs.max);
  if (policy.deadlineMs !== null) {
    checkInteger('deadlineMs', policy.deadlineMs, limits.deadlineMs.min, limits.deadlineMs.max);
  }
  if (policy.delayMs !== null) {
    checkInteger('delayMs', policy.delayMs, limits.delayMs.min, limits.delayMs.max);
  }
  return problems;
}
