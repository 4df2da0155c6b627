import { z } from 'zod';
import {
  type AnyWorkflowDefinition,
  childLimits,
  type MapSpec,
  maxChildrenProblem,
  type Tolerance,
  toleranceProblem,
} from './child-workflows';
import { concurrencyLimitProblem } from './concurrency-key';
import { DefinitionError, defaultQueue, type StepDefinition, step } from './define-workflow';
import type {
  MapChildResult,
  MapInputChecked,
  MapInputProblem,
  MapOutput,
  MapStepOptions,
  Omitted,
} from './map-step-options';
import { unnamedOneStepChild } from './one-step-child';
import { defaultRetryPolicy, type RetryPolicy } from './retry-policy';
import { StepError } from './step-error';
import type { TypedStepDefinition } from './typed-step';
import type { WorkflowDefinition } from './workflow-definition';

const optionKeys = new Set([
  'after',
  'over',
  'workflow',
  'run',
  'input',
  'inputSchema',
  'tolerate',
  'maxChildren',
  'concurrency',
  'queue',
  'reentrant',
  'maxAttempts',
  'backoff',
  'timeoutMs',
]);
const runOnlyKeys = ['inputSchema', 'queue', 'reentrant', 'maxAttempts', 'backoff', 'timeoutMs'];

/**
 * Declares a map step (R44): it runs no code. Once its upstream steps succeeded, the engine
 * reads `over(ctx)` and starts one child per element, `workflow` or a one-step child running
 * `run`, with `input(element, index, ctx)` or the element as its input; the step succeeds
 * with their results in input order (with `tolerate`, their outcomes). Give it to
 * `defineWorkflow({ steps })` or `workflow(...).add(name, ...)`, or use
 * `workflow(...).map(name, ...)` to type `over` and `input` by the upstream results.
 */
export function map<
  const TElement,
  TChild extends AnyWorkflowDefinition = never,
  TReturn = never,
  TSchema extends z.ZodType = z.ZodUnknown,
  const TGiven = Omitted,
  TAfter extends string = never,
  TTolerate extends Tolerance | undefined = undefined,
  TInput = unknown,
  TResults = Readonly<Record<string, unknown>>,
>(
  options: MapStepOptions<
    TAfter,
    TInput,
    TResults,
    TElement,
    TGiven,
    TTolerate,
    TChild,
    TSchema,
    TReturn
  >,
): MapInputChecked<
  MapInputProblem<TElement, TGiven, TChild, TSchema>,
  TypedStepDefinition<
    StepDefinition<TInput>,
    TAfter,
    MapOutput<MapChildResult<TChild, TReturn>, TTolerate>
  >
>;
export function map(given: object): StepDefinition {
  if (typeof given !== 'object' || given === null) {
    throw new DefinitionError('invalid map step', ['options must be an object']);
  }
  const options = given as Record<string, unknown>;
  const problems = mapProblems(options);
  const child = childProblemsOr(options, problems);
  if (options.concurrency !== undefined && child?.steps.some((s) => s.concurrency !== undefined)) {
    problems.push(
      "concurrency: the child workflow's steps have concurrency keys of their own; a task holds one key",
    );
  }
  if (problems.length > 0 || child === null) {
    throw new DefinitionError('invalid map step', problems);
  }
  const spec: MapSpec = Object.freeze({
    over: options.over as MapSpec['over'],
    workflow: child,
    input: (options.input ?? null) as MapSpec['input'],
    tolerate:
      options.tolerate === undefined || options.tolerate === null
        ? null
        : Object.freeze({ ...(options.tolerate as Tolerance) }),
    maxChildren: (options.maxChildren as number | undefined) ?? childLimits.defaultMaxChildren,
    concurrency: (options.concurrency as number | undefined) ?? null,
  });
  const policy: RetryPolicy = Object.freeze({ ...defaultRetryPolicy, maxAttempts: 1, map: true });
  return Object.freeze({
    after: Object.freeze([...((options.after as readonly string[] | undefined) ?? [])]),
    queue: defaultQueue,
    policy,
    map: spec,
    run: () => {
      throw new StepError('invalid_argument', 'a map step runs no code: it starts child workflows');
    },
  });
}

/** Every problem of the options that does not depend on how the children run. */
function mapProblems(options: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const unknown = Object.keys(options).filter((key) => !optionKeys.has(key));
  if (unknown.length > 0) problems.push(`unknown options: ${unknown.join(', ')}`);
  if (typeof options.over !== 'function') {
    problems.push('over must be a function of { workflowId, input, results } giving the list');
  }
  if (options.input !== undefined && typeof options.input !== 'function') {
    problems.push("input must be a function (element, index, ctx) giving the child's input");
  }
  const tolerance = toleranceProblem(options.tolerate);
  if (tolerance !== null) problems.push(tolerance);
  const maxChildren = maxChildrenProblem(options.maxChildren ?? null);
  if (maxChildren !== null) problems.push(maxChildren);
  if (options.concurrency !== undefined) {
    const problem = concurrencyLimitProblem('concurrency', options.concurrency);
    if (problem !== null) problems.push(problem);
  }
  return problems;
}

/** The child definition, or null with the problems of `workflow` / `run` added. */
function childProblemsOr(
  options: Record<string, unknown>,
  problems: string[],
): WorkflowDefinition | null {
  const hasWorkflow = options.workflow !== undefined;
  const hasRun = options.run !== undefined;
  if (hasWorkflow && hasRun) {
    problems.push('give workflow or run, not both');
    return null;
  }
  if (hasWorkflow) {
    const given = runOnlyKeys.filter((key) => options[key] !== undefined);
    if (given.length > 0) {
      problems.push(
        `${given.join(', ')}: options of a one-step child (run); a child workflow has its own`,
      );
    }
    if (!isDefinition(options.workflow)) {
      problems.push('workflow must be a definition (defineWorkflow or workflow(...).build())');
      return null;
    }
    return options.workflow;
  }
  if (!hasRun) {
    problems.push('give workflow (a child definition) or run (a one-step child)');
    return null;
  }
  const schema = options.inputSchema ?? z.unknown();
  const schemaProblems =
    typeof (schema as z.ZodType).safeParse === 'function'
      ? []
      : ['inputSchema must be a zod schema'];
  problems.push(...schemaProblems);
  try {
    const { queue, reentrant, maxAttempts, backoff, timeoutMs, run } = options;
    const childStep = step({ queue, reentrant, maxAttempts, backoff, timeoutMs, run } as Parameters<
      typeof step
    >[0]);
    return schemaProblems.length > 0 ? null : unnamedOneStepChild(schema as z.ZodType, childStep);
  } catch (error) {
    if (!(error instanceof DefinitionError)) throw error;
    problems.push(...error.problems.map((problem) => `one-step child: ${problem}`));
    return null;
  }
}

function isDefinition(value: unknown): value is WorkflowDefinition {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as WorkflowDefinition).name === 'string' &&
    Array.isArray((value as WorkflowDefinition).steps)
  );
}
