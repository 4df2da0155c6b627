/**
 * Child workflows (R43–R48) as data: what a step's `run` returns to start them
 * (`startChildren`, `startChild`), what a map step declares (`MapSpec`), the tolerance both
 * may give, and the limits. The engine admits and writes the children; the machine decides
 * what their outcomes mean for the step (`children-decisions.ts`).
 */
import type { z } from 'zod';
import { attributesProblem, type WorkflowAttributes } from './attributes';
import { StepError } from './step-error';
import {
  childrenTag,
  type StartChildren,
  type Tolerance,
  type WorkflowDefinition,
} from './workflow-definition';

export type { MapContext, MapSpec, StartChildren, Tolerance } from './workflow-definition';

/** Any definition, whatever its input schema and result: what a parent may start. */
// biome-ignore lint/suspicious/noExplicitAny: each child definition has its own input schema type.
export type AnyWorkflowDefinition = WorkflowDefinition<any, unknown>;

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
  /**
   * Attributes of every child (R55), besides the ones it inherits from its parent and its own
   * definition's: a key of theirs may be given again only with the same value. A bad or
   * conflicting one fails the step (`invalid_attributes`, `conflicting_attributes` in its
   * error) and no child is written.
   */
  readonly attributes?: WorkflowAttributes;
}

/**
 * What a child of `workflow` takes as input: what its schema accepts for a definition, anything
 * for a name (the engine checks it against the named definition when it admits the child).
 */
export type ChildInput<TWorkflow> =
  TWorkflow extends WorkflowDefinition<infer TSchema, unknown> ? z.input<TSchema> : unknown;

/**
 * Start one child workflow per input and wait for them (R43): the step's output is their
 * results in input order, or with `tolerate` their outcomes. Return it from `run`.
 */
export function startChildren<TWorkflow extends AnyWorkflowDefinition | string>(
  workflow: TWorkflow,
  inputs: readonly ChildInput<TWorkflow>[],
  options: StartChildrenOptions = {},
): StartChildren {
  return buildRequest(workflow as WorkflowDefinition | string, inputs, options, false);
}

/** Start one child workflow and wait for it: the step's output is its result. */
export function startChild<TWorkflow extends AnyWorkflowDefinition | string>(
  workflow: TWorkflow,
  input: ChildInput<TWorkflow>,
  options: Omit<StartChildrenOptions, 'maxChildren'> = {},
): StartChildren {
  return buildRequest(workflow as WorkflowDefinition | string, [input], options, true);
}

function buildRequest(
  workflow: WorkflowDefinition | string,
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
    attributes: attributesOf(options.attributes),
  });
}

/**
 * Good attributes copied and frozen, so a change to the caller's object after `run` returned
 * changes no child; bad ones as given, for the engine to refuse with what is wrong with them
 * (a copy would turn an array, say, into a plain object).
 */
function attributesOf(attributes: WorkflowAttributes | undefined): WorkflowAttributes | null {
  if (attributes === undefined) return null;
  return attributesProblem(attributes) === null ? Object.freeze({ ...attributes }) : attributes;
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

/**
 * What one child came to, as a tolerant step's output lists it (R45); `T` is the child
 * workflow's result, present when it succeeded.
 */
export interface ChildOutcome<T = unknown> {
  readonly workflowId: string;
  readonly state: 'succeeded' | 'dead' | 'cancelled';
  readonly result?: T;
  /** The reason code of the edge that ended the child's failing step. */
  readonly reason?: string;
}

/**
 * `definitions` and every child workflow their map steps start, at any depth, each object once:
 * what a worker must know to run the children (R44), including the one-step children of
 * `map({ run })`, which no user holds.
 */
export function withMapChildren(
  definitions: readonly WorkflowDefinition[],
): readonly WorkflowDefinition[] {
  const found: WorkflowDefinition[] = [];
  const visit = (definition: WorkflowDefinition) => {
    if (found.includes(definition)) return;
    found.push(definition);
    for (const step of definition.steps) if (step.map !== undefined) visit(step.map.workflow);
  };
  for (const definition of definitions) visit(definition);
  return found;
}
