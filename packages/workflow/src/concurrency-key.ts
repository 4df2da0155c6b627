import type { DeepReadonly } from './deep-freeze';
import { leaseHoldingStates, receiptAwaitingState } from './edge-lookup';
import { keyTextProblem } from './key-text';
import type { TaskState } from './machine-table';

/**
 * A step's concurrency key (R50): at most `limit` tasks of one group and key hold a slot at
 * once, across every worker and workflow. The key is derived at admission from what is known
 * then (the workflow's input), so it is stored with the task and a claim never runs user code.
 */
export interface ConcurrencyKey<TInput = unknown> {
  readonly key: (context: ConcurrencyKeyContext<TInput>) => string;
  readonly limit: number;
  /** Shared by every step that names it, in any workflow; default `<workflow>/<step>`. */
  readonly group?: string;
}

/** What a concurrency key is derived from, at admission. */
export interface ConcurrencyKeyContext<TInput = unknown> {
  readonly input: DeepReadonly<TInput>;
  readonly workflowName: string;
  readonly step: string;
}

/** A task's slot as stored: its group, key and the group's limit. */
export interface TaskConcurrency {
  readonly group: string;
  readonly key: string;
  readonly limit: number;
}

export const concurrencyLimits = Object.freeze({
  limit: { min: 1, max: 10_000 },
  maxKeyLength: 200,
  maxGroupLength: 200,
});

/**
 * The states whose task holds its key's slot. A task takes it with its lease (`leased`); it
 * keeps it while a cancel it was asked for is unconfirmed (`cancel_requested`, but only with
 * the lease kept from `leased`: one asked while awaiting children holds none) and while its
 * effect awaits a receipt. Waiting for an event or children, pending and queued hold none.
 */
export const slotHoldingStates: readonly TaskState[] = Object.freeze([
  ...new Set([...leaseHoldingStates, receiptAwaitingState]),
]);

/** Whether a task in `state` with `leaseHolder` holds its concurrency key's slot. */
export function holdsConcurrencySlot(state: TaskState, leaseHolder: string | null): boolean {
  return (
    slotHoldingStates.includes(state) && (state !== 'cancel_requested' || leaseHolder !== null)
  );
}

/** Every problem of a step's `concurrency` option, for `DefinitionError` at definition load. */
export function concurrencyProblems(option: unknown): string[] {
  if (typeof option !== 'object' || option === null) {
    return ['concurrency must be an object { key, limit, group? }'];
  }
  const { key, limit, group } = option as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof key !== 'function') problems.push('concurrency.key must be a function');
  const limitProblem = concurrencyLimitProblem('concurrency.limit', limit);
  if (limitProblem !== null) problems.push(limitProblem);
  if (group !== undefined) {
    const problem = keyTextProblem('concurrency.group', group, concurrencyLimits.maxGroupLength);
    if (problem !== null) problems.push(problem);
  }
  return problems;
}

/** What is wrong with a concurrency limit (`label`: where it was given), or null. */
export function concurrencyLimitProblem(label: string, value: unknown): string | null {
  const { min, max } = concurrencyLimits.limit;
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) {
    return null;
  }
  return `${label} must be an integer from ${min} to ${max}, got ${String(value)}`;
}

/** The default group of a step's key: its workflow and step. */
export function defaultConcurrencyGroup(workflowName: string, step: string): string {
  return `${workflowName}/${step}`;
}

/** The group of a map step's children's slots (R44): the key is the map step's task. */
export function mapConcurrencyGroup(workflowName: string, step: string): string {
  return `map:${workflowName}/${step}`;
}

/**
 * A step's slot for one input, or why it has none: the key function threw or gave no
 * storable, non-empty string of at most `maxKeyLength` characters (R58).
 */
export function concurrencyOf(
  option: ConcurrencyKey,
  context: ConcurrencyKeyContext,
):
  | { readonly ok: true; readonly slot: TaskConcurrency }
  | { readonly ok: false; readonly problem: string } {
  let key: unknown;
  try {
    key = option.key(context);
  } catch (error) {
    return {
      ok: false,
      problem: `the concurrency key function of step "${context.step}" threw: ${String(error)}`,
    };
  }
  const label = `the concurrency key of step "${context.step}"`;
  const problem = keyTextProblem(label, key, concurrencyLimits.maxKeyLength);
  if (problem !== null) return { ok: false, problem };
  return {
    ok: true,
    slot: {
      group: option.group ?? defaultConcurrencyGroup(context.workflowName, context.step),
      key: key as string,
      limit: option.limit,
    },
  };
}
