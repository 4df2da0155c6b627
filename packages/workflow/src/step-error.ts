import { type ErrorCategory, isErrorCategory } from './error-categories';

/**
 * How long a step may ask to wait before its retry (R51): from 1 ms to 24 h. Outside it the
 * StepError constructor throws a TypeError whose message starts with `invalid_retry_after`.
 */
export const retryAfterLimits = Object.freeze({ minMs: 1, maxMs: 86_400_000 });

/** The stable code of a `retryAfterMs` that is not an integer within `retryAfterLimits`. */
export const invalidRetryAfterCode = 'invalid_retry_after';

/** What is wrong with a `retryAfterMs`, or null: an integer of ms within `retryAfterLimits`. */
export function retryAfterProblem(retryAfterMs: unknown): string | null {
  const { minMs, maxMs } = retryAfterLimits;
  if (
    typeof retryAfterMs !== 'number' ||
    !Number.isInteger(retryAfterMs) ||
    retryAfterMs < minMs ||
    retryAfterMs > maxMs
  ) {
    return `retryAfterMs must be an integer number of milliseconds from ${minMs} to ${maxMs}, got ${String(retryAfterMs)}`;
  }
  return null;
}

/**
 * A classified step failure (R17): the category, not the message, decides retry or dead.
 * `retryAfterMs` is the wait a platform asked for (its Retry-After). A `throttled` error is
 * retried exactly that long after it failed, instead of the backoff (R51); any other
 * retryable category waits at least that long, with the backoff's jitter on top.
 */
export class StepError extends Error {
  override readonly name = 'StepError';
  readonly category: ErrorCategory;
  /** The wait the step asks for before its next attempt, e.g. from a platform's Retry-After. */
  readonly retryAfterMs: number | undefined;

  constructor(
    category: ErrorCategory,
    message: string,
    options: { retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    if (!isErrorCategory(category)) {
      throw new TypeError(`StepError: unknown error category ${JSON.stringify(category)}`);
    }
    if (options.retryAfterMs !== undefined) {
      const problem = retryAfterProblem(options.retryAfterMs);
      if (problem !== null) throw new TypeError(`${invalidRetryAfterCode}: StepError ${problem}`);
    }
    this.category = category;
    this.retryAfterMs = options.retryAfterMs;
  }
}

export interface ClassifiedError {
  readonly category: ErrorCategory;
  readonly summary: string;
  readonly retryAfterMs: number | undefined;
}

/** Longest error summary kept on a transition; the rest belongs in logs. */
export const maxErrorSummaryLength = 500;

/** Classifies anything a step threw: a StepError keeps its category, everything else is `unknown`. */
export function classifyError(error: unknown): ClassifiedError {
  const summary = truncate(error instanceof Error ? error.message : String(error));
  if (error instanceof StepError) {
    return { category: error.category, summary, retryAfterMs: error.retryAfterMs };
  }
  return { category: 'unknown', summary, retryAfterMs: undefined };
}

function truncate(text: string): string {
  return text.length <= maxErrorSummaryLength
    ? text
    : `${text.slice(0, maxErrorSummaryLength - 1)}…`;
}
