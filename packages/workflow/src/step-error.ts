import { type ErrorCategory, isErrorCategory } from './error-categories';

/** A classified step failure (R17): the category, not the message, decides retry or dead. */
export class StepError extends Error {
  override readonly name = 'StepError';
  readonly category: ErrorCategory;
  /** The earliest the next attempt may start, e.g. from a platform's Retry-After. */
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
