import type { ConcurrencyKeyContext } from './concurrency-key';
import { keyTextProblem } from './key-text';

/**
 * A rate limit declared on the engine (R51): in any window of `periodMs`, by the database's
 * clock, the claims granted for one name and key cost at most `limit` in total.
 */
export interface RateLimit {
  readonly name: string;
  readonly limit: number;
  readonly periodMs: number;
}

export const rateLimitLimits = Object.freeze({
  limit: Object.freeze({ min: 1, max: 1_000_000 }),
  /** 1 ms to 24 h. */
  periodMs: Object.freeze({ min: 1, max: 86_400_000 }),
  cost: Object.freeze({ min: 1, max: 1_000_000 }),
  maxNameLength: 200,
  maxKeyLength: 200,
});

/**
 * A step's use of a rate limit the engine declares (R51). Without `key`, the name is one
 * bucket for every task that names it; with it, one bucket per key, derived at admission from
 * what is known then (the workflow's input) like a concurrency key, so a claim runs no user
 * code. Each claimed task spends `cost` (default 1).
 */
export interface StepRateLimit<TInput = unknown> {
  readonly name: string;
  readonly key?: (context: ConcurrencyKeyContext<TInput>) => string;
  readonly cost?: number;
}

/** What a task spends when claimed, fixed at admission. `key` null: the name's one bucket. */
export interface TaskRate {
  readonly name: string;
  readonly key: string | null;
  readonly cost: number;
}

/**
 * What is wrong with an integer option that must lie within `bounds`, or null; the message
 * names the option and the value given, as the other definition checks do.
 */
export function boundedIntegerProblem(
  label: string,
  value: unknown,
  bounds: { readonly min: number; readonly max: number },
): string | null {
  const { min, max } = bounds;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    return `${label} must be an integer from ${min} to ${max}, got ${String(value)}`;
  }
  return null;
}

/**
 * Every problem of a rate limit's own fields (not whether its name is unique: that is the
 * engine's, `rateLimitDeclarationProblems`).
 */
export function rateLimitFieldProblems(options: unknown): string[] {
  if (typeof options !== 'object' || options === null) {
    return ['a rate limit must be an object { name, limit, periodMs }'];
  }
  const { name, limit, periodMs } = options as Record<string, unknown>;
  return [
    keyTextProblem('name', name, rateLimitLimits.maxNameLength),
    boundedIntegerProblem('limit', limit, rateLimitLimits.limit),
    boundedIntegerProblem('periodMs', periodMs, rateLimitLimits.periodMs),
  ].filter((problem) => problem !== null);
}

/** Every problem of a step's `rateLimit` option, for `DefinitionError` at step definition. */
export function rateLimitProblems(option: unknown): string[] {
  if (typeof option !== 'object' || option === null) {
    return ['rateLimit must be an object { name, key?, cost? }'];
  }
  const { name, key, cost } = option as Record<string, unknown>;
  const problems: string[] = [];
  const nameProblem = keyTextProblem('rateLimit.name', name, rateLimitLimits.maxNameLength);
  if (nameProblem !== null) problems.push(nameProblem);
  if (key !== undefined && typeof key !== 'function') {
    problems.push('rateLimit.key must be a function');
  }
  if (cost !== undefined) {
    const costProblem = boundedIntegerProblem('rateLimit.cost', cost, rateLimitLimits.cost);
    if (costProblem !== null) problems.push(costProblem);
  }
  return problems;
}

/**
 * A step's rate spend for one input, or why it has none: its key function threw or gave no
 * storable, non-empty string of at most `maxKeyLength` characters (R58). Without a key
 * function, no user code runs and the key is null.
 */
export function rateOf(
  option: StepRateLimit,
  context: ConcurrencyKeyContext,
):
  | { readonly ok: true; readonly rate: TaskRate }
  | { readonly ok: false; readonly problem: string } {
  const cost = option.cost ?? 1;
  if (option.key === undefined) return { ok: true, rate: { name: option.name, key: null, cost } };
  let key: unknown;
  try {
    key = option.key(context);
  } catch (error) {
    return {
      ok: false,
      problem: `the rate limit key function of step "${context.step}" threw: ${String(error)}`,
    };
  }
  const label = `the rate limit key of step "${context.step}"`;
  const problem = keyTextProblem(label, key, rateLimitLimits.maxKeyLength);
  if (problem !== null) return { ok: false, problem };
  return { ok: true, rate: { name: option.name, key: key as string, cost } };
}
