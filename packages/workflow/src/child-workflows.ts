/**
 * Child workflows (R43–R48) as data: what a step's `run` returns to start them
 * (`startChildren`, `startChild`), what a map step declares (`MapSpec`), the tolerance both
 * may give, and the limits. The engine admits and writes the children; the machine decides
 * what their outcomes mean for the step (`children-decisions.ts`).
 */
import { StepError } from './step-error';

/**
 * A child workflow as a step names it: its definition (only its name is read: the engine
 * starts the definition it was given under that name) or the name itself.
 */
export interface ChildWorkflowRef {
  readonly name: string;
}

const childrenTag: unique symbol = Symbol.for('causeway.start-children');

/** How many failed children a step accepts before it fails (R45); absent: none (fail fast). */
export interface Tolerance {
  /** At most this many children may end `dead` or `cancelled`. */
  readonly failures?: number;
  /** At most this percentage (0–100) of the children may end `dead` or `cancelled`. */
  readonly percent?: number;
}

export const childLimits = Object.freeze({
  /** Children one step may start unless it says otherwise (`maxChildren`). */
  defaultMaxChildren: 10_000,
  /** The most `maxChildren` may allow. */
  maxChildren: 100_000,
  /** The deepest a tree may go: a root is depth 0, its children depth 1, … */
  maxDepth: 10,
});

export interface StartChildrenOptions {
  /** Start them without waiting: the step succeeds at once with their ids (R46). */
  readonly detached?: boolean;
  readonly tolerate?: Tolerance;
  /** Overrides the default limit of children for this step (up to 100,000). */
  readonly maxChildren?: number;
}

/** A step's request to start child workflows, returned from its `run`. */
export interface StartChildren {
  readonly [childrenTag]: true;
  readonly kind: 'start_children';
  /** A definition the engine knows, or its name. */
  readonly workflow: ChildWorkflowRef | string;
  readonly inputs: readonly unknown[];
  /** `startChild`: the step's output is the one child's result, not a list. */
  readonly single: boolean;
  readonly detached: boolean;
  readonly tolerate: Tolerance | null;
  readonly maxChildren: number;
}

/**
 * Start one child workflow per input and wait for them (R43): the step's output is their
 * results in input order, or with `tolerate` their outcomes. Return it from `run`.
 */
export function startChildren(
  workflow: ChildWorkflowRef | string,
  inputs: readonly unknown[],
  options: StartChildrenOptions = {},
): StartChildren {
  return buildRequest(workflow, inputs, options, false);
}

/** Start one child workflow and wait for it: the step's output is its result. */
export function startChild(
  workflow: ChildWorkflowRef | string,
  input: unknown,
  options: Omit<StartChildrenOptions, 'maxChildren'> = {},
): StartChildren {
  return buildRequest(workflow, [input], options, true);
}

function buildRequest(
  workflow: ChildWorkflowRef | string,
  inputs: readonly unknown[],
  options: StartChildrenOptions,
  single: boolean,
): StartChildren {
  const what = single ? 'startChild' : 'startChildren';
  if (!Array.isArray(inputs)) {
    throw new StepError('invalid_argument', `${what}: inputs must be an array`);
  }
  const problem =
    toleranceProblem(options.tolerate) ?? maxChildrenProblem(options.maxChildren ?? null);
  if (problem !== null) throw new StepError('invalid_argument', `${what}: ${problem}`);
  return Object.freeze({
    [childrenTag]: true as const,
    kind: 'start_children' as const,
    workflow,
    inputs: Object.freeze([...inputs]),
    single,
    detached: options.detached === true,
    tolerate: options.tolerate === undefined ? null : Object.freeze({ ...options.tolerate }),
    maxChildren: options.maxChildren ?? childLimits.defaultMaxChildren,
  });
}

export function isStartChildren(value: unknown): value is StartChildren {
  return typeof value === 'object' && value !== null && childrenTag in value;
}

/** Why a tolerance is not one, or null. */
export function toleranceProblem(tolerance: unknown): string | null {
  if (tolerance === undefined || tolerance === null) return null;
  if (typeof tolerance !== 'object') return 'tolerate must be { failures?, percent? }';
  const { failures, percent } = tolerance as Record<string, unknown>;
  const extra = Object.keys(tolerance).filter((key) => key !== 'failures' && key !== 'percent');
  if (extra.length > 0) return `tolerate has unknown keys: ${extra.join(', ')}`;
  if (failures === undefined && percent === undefined) {
    return 'tolerate needs failures or percent';
  }
  if (failures !== undefined && (!Number.isInteger(failures) || (failures as number) < 0)) {
    return `tolerate.failures must be a non-negative integer, got ${String(failures)}`;
  }
  if (
    percent !== undefined &&
    (typeof percent !== 'number' ||
      !Number.isFinite(percent) ||
      (percent as number) < 0 ||
      (percent as number) > 100)
  ) {
    return `tolerate.percent must be a number from 0 to 100, got ${String(percent)}`;
  }
  return null;
}

/** Why a `maxChildren` is out of range, or null. */
export function maxChildrenProblem(maxChildren: unknown): string | null {
  if (maxChildren === null) return null;
  if (
    !Number.isInteger(maxChildren) ||
    (maxChildren as number) < 1 ||
    (maxChildren as number) > childLimits.maxChildren
  ) {
    return `maxChildren must be an integer from 1 to ${childLimits.maxChildren}, got ${String(maxChildren)}`;
  }
  return null;
}

/**
 * The failures a tolerance allows among `total` children: within every bound it gives (both
 * must hold when both are given); 0 without one.
 */
export function allowedFailures(tolerance: Tolerance | null, total: number): number {
  if (tolerance === null) return 0;
  const bounds: number[] = [];
  if (tolerance.failures !== undefined) bounds.push(tolerance.failures);
  if (tolerance.percent !== undefined) bounds.push(Math.floor((total * tolerance.percent) / 100));
  return Math.min(...bounds);
}

/** What one child came to, as a tolerant step's output lists it (R45). */
export interface ChildOutcome {
  readonly workflowId: string;
  readonly state: 'succeeded' | 'dead' | 'cancelled';
  readonly result?: unknown;
  /** The reason code of the edge that ended the child's failing step. */
  readonly reason?: string;
}

/** What a map step's functions see: the workflow's input and its upstream results. */
export interface MapContext<TInput = unknown, TResults = Readonly<Record<string, unknown>>> {
  readonly workflowId: string;
  readonly input: TInput;
  readonly results: TResults;
}

/**
 * A map step (R44), as the engine reads it: it runs no code; when its upstream steps have
 * succeeded, `over` gives a list and one child of `workflow` starts per element, with
 * `input(element, index, ctx)` or the element itself as the child's input.
 */
export interface MapSpec {
  readonly over: (context: MapContext) => unknown;
  readonly workflow: ChildWorkflowRef;
  readonly input: ((element: unknown, index: number, context: MapContext) => unknown) | null;
  readonly tolerate: Tolerance | null;
  readonly maxChildren: number;
}
