/**
 * A definition's debounce (R52): a submit whose key matches a workflow of the definition that
 * has not started supersedes it. The survivor is due `quietMs` after the latest submit, but no
 * later than `maxWaitMs` after the first submit of the burst.
 */
export interface Debounce<TInput = unknown> {
  readonly key: (input: TInput) => string;
  readonly quietMs: number;
  /** Without it, a burst that never pauses for `quietMs` is put off for as long as it lasts. */
  readonly maxWaitMs?: number;
}

/** The bounds of `quietMs` and `maxWaitMs`: positive, and at most a week (stored as int4). */
export const debounceLimits = Object.freeze({ minMs: 1, maxMs: 7 * 24 * 60 * 60 * 1000 });

/** Every problem of a definition's `debounce`, for `DefinitionError` at definition load. */
export function debounceProblems(debounce: unknown): string[] {
  if (typeof debounce !== 'object' || debounce === null) {
    return ['debounce must be an object { key, quietMs, maxWaitMs? }'];
  }
  const { key, quietMs, maxWaitMs } = debounce as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof key !== 'function') problems.push('debounce.key must be a function of the input');
  const quietProblem = durationProblem('debounce.quietMs', quietMs);
  if (quietProblem !== null) problems.push(quietProblem);
  if (maxWaitMs !== undefined) {
    const maxWaitProblem = durationProblem('debounce.maxWaitMs', maxWaitMs);
    if (maxWaitProblem !== null) problems.push(maxWaitProblem);
    else if (quietProblem === null && (maxWaitMs as number) < (quietMs as number)) {
      problems.push(
        `debounce.maxWaitMs (${maxWaitMs}) must be at least debounce.quietMs (${quietMs})`,
      );
    }
  }
  return problems;
}

function durationProblem(label: string, value: unknown): string | null {
  const { minMs, maxMs } = debounceLimits;
  if (typeof value === 'number' && Number.isInteger(value) && value >= minMs && value <= maxMs) {
    return null;
  }
  return `${label} must be an integer from ${minMs} to ${maxMs} milliseconds, got ${String(value)}`;
}
