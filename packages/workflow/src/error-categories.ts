/**
 * Error categories, R17. Decided in code (StepError), never derived from message text.
 */
export const transientErrorCategories = [
  'timeout',
  'throttled',
  'network',
  'unavailable',
  'db_conflict',
] as const;

export const nonRetryableErrorCategories = [
  'invalid_argument',
  'not_found',
  'unauthorized',
  'conflict',
] as const;

export const errorCategories = [
  ...transientErrorCategories,
  ...nonRetryableErrorCategories,
  'unknown',
] as const;
export type ErrorCategory = (typeof errorCategories)[number];

/** Transient and unclassified errors are retried within the attempt limit; the rest never. */
export function isRetryableCategory(category: ErrorCategory): boolean {
  return !(nonRetryableErrorCategories as readonly ErrorCategory[]).includes(category);
}

export function isErrorCategory(value: unknown): value is ErrorCategory {
  return typeof value === 'string' && (errorCategories as readonly string[]).includes(value);
}
