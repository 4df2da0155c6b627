import type { z } from 'zod';
import type { WorkflowAttributes } from './attributes';
import { type ConcurrencyKey, concurrencyProblems } from './concurrency-key';
import { type Debounce, debounceProblems } from './debounce';
import { namedMapChild } from './one-step-child';
import { rateLimitProblems, type StepRateLimit } from './rate-limit';
import {
  type BackoffPolicy,
  defaultBackoff,
  defaultRetryPolicy,
  type RetryPolicy,
  retryPolicyLimits,
  retryPolicyProblems,
} from './retry-policy';
import type { StepContext } from './step-context';
import { priorityProblem } from './task-priority';
import type {
  StepDefinition,
  StepReturn,
  WorkflowDefinition,
  WorkflowStep,
} from './workflow-definition';
import { shapeDigest, versionProblems } from './workflow-version';

export type {
  StepDefinition,
  StepReturn,
  WorkflowDefinition,
  WorkflowStep,
} from './workflow-definition';

export interface StepOptions<TInput, TOutput> {
  /** Names of the steps that must succeed first. */
  readonly after?: readonly string[];
  /** Resource class with its own bounded concurrency (R32). */
  readonly queue?: string;
  readonly reentrant?: boolean;
  readonly maxAttempts?: number;
  readonly backoff?: Partial<BackoffPolicy>;
  readonly timeoutMs?: number;
  /** Absolute deadline from the workflow's acceptance; the step must start before it. */
  readonly deadlineMs?: number;
  /**
   * Queue the step this long after its upstream steps succeeded (a first step: after its
   * workflow's start), by database time (R36).
   */
  readonly delayMs?: number;
  /** Seconds of backlog this step's tasks may jump in their queue (R49); a submit's wins. */
  readonly priority?: number;
  /**
   * At most `limit` tasks of the group and key hold a slot at once, across every worker and
   * workflow (R50); the key is derived from the workflow's input at admission.
   */
  readonly concurrency?: ConcurrencyKey<TInput>;
  /**
   * Each claim of its tasks spends `cost` (default 1) of the engine's rate limit `name`, in
   * the bucket of `key` (derived from the workflow's input at admission), or of the name's one
   * bucket without it (R51).
   */
  readonly rateLimit?: StepRateLimit<TInput>;
  readonly run: (
    context: StepContext<TInput>,
  ) => Promise<StepReturn<TOutput>> | StepReturn<TOutput>;
}

export interface WorkflowOptions<TSchema extends z.ZodType> {
  readonly name: string;
  /**
   * The version its workflows record (R54): 1 to 64 characters. Without it, they record a
   * digest of the steps' shape (names, kinds, `after`, queues).
   */
  readonly version?: string;
  readonly input: TSchema;
  /** Derives the idempotency key from the input (R2); a caller's explicit key wins. */
  readonly idempotencyKey?: (input: z.output<TSchema>) => string;
  /** Total budget from acceptance that all steps share (R29). */
  readonly deadlineMs?: number;
  /** Submits of one key supersede the workflow not started yet, and wait for quiet (R52). */
  readonly debounce?: Debounce<z.output<TSchema>>;
  /**
   * Searchable attributes of each workflow, from its input at admission (R55): at most 16
   * keys of strings, numbers or booleans, merged with a submit's and a parent's.
   */
  readonly attributes?: (input: z.output<TSchema>) => WorkflowAttributes;
  readonly steps: Readonly<Record<string, StepDefinition<z.output<TSchema>>>>;
}

/**
 * The codes of `DefinitionError`: `invalid_version` for a bad `version` (R54),
 * `duplicate_version` for two definitions of one name and version on one engine,
 * `invalid_definition` for any other mistake.
 */
export const definitionErrorCodes = Object.freeze([
  'invalid_definition',
  'invalid_version',
  'duplicate_version',
] as const);
export type DefinitionErrorCode = (typeof definitionErrorCodes)[number];

/** A definition mistake, thrown at definition time with every problem found. */
export class DefinitionError extends Error {
  override readonly name = 'DefinitionError';
  readonly code: DefinitionErrorCode;
  readonly problems: readonly string[];

  constructor(
    subject: string,
    problems: readonly string[],
    code: DefinitionErrorCode = 'invalid_definition',
  ) {
    super(`${subject}: ${problems.join('; ')}`);
    this.problems = problems;
    this.code = code;
  }
}

export const defaultQueue = 'default';
const namePattern = /^[a-z][a-z0-9_-]*$/;
const maxNameLength = 63;

/**
 * Declares a step; its name is its key in `defineWorkflow({ steps })`. Give the workflow's
 * input type (`step<MyInput>({...})`) to type `ctx.input`; without it, `ctx.input` is
 * `unknown` (TypeScript cannot infer it through the nested call).
 */
export function step<TInput = unknown, TOutput = unknown>(
  options: StepOptions<TInput, TOutput>,
): StepDefinition<TInput, TOutput> {
  const policy: RetryPolicy = Object.freeze({
    maxAttempts: options.maxAttempts ?? defaultRetryPolicy.maxAttempts,
    backoff: Object.freeze({ ...defaultBackoff, ...options.backoff }),
    reentrant: options.reentrant ?? defaultRetryPolicy.reentrant,
    timeoutMs: options.timeoutMs ?? defaultRetryPolicy.timeoutMs,
    deadlineMs: options.deadlineMs ?? null,
    delayMs: options.delayMs ?? null,
    wait: null,
    map: false,
  });
  const problems = retryPolicyProblems(policy);
  const queue = options.queue ?? defaultQueue;
  problems.push(...nameProblems('queue', queue));
  if (options.priority !== undefined) {
    const problem = priorityProblem(options.priority);
    if (problem !== null) problems.push(problem);
  }
  if (options.concurrency !== undefined) problems.push(...concurrencyProblems(options.concurrency));
  if (options.rateLimit !== undefined) problems.push(...rateLimitProblems(options.rateLimit));
  if (typeof options.run !== 'function') problems.push('run must be a function');
  if (problems.length > 0) throw new DefinitionError('invalid step', problems);
  return Object.freeze({
    after: Object.freeze([...(options.after ?? [])]),
    queue,
    policy,
    ...(options.priority === undefined ? {} : { priority: options.priority }),
    ...(options.concurrency === undefined
      ? {}
      : { concurrency: Object.freeze({ ...options.concurrency }) }),
    ...(options.rateLimit === undefined
      ? {}
      : { rateLimit: Object.freeze({ ...options.rateLimit }) }),
    run: options.run,
  });
}

/**
 * Declares a workflow: validates names, dependencies (a DAG) and budgets, names the one-step
 * children of its map steps (`<name>/<step>`), then freezes it.
 */
export function defineWorkflow<TSchema extends z.ZodType>(
  options: WorkflowOptions<TSchema>,
): WorkflowDefinition<TSchema> {
  const subject = `workflow ${JSON.stringify(options.name)}`;
  if (options.version !== undefined) {
    const wrong = versionProblems(options.version);
    if (wrong.length > 0) throw new DefinitionError(subject, wrong, 'invalid_version');
  }
  const problems: string[] = [...nameProblems('workflow name', options.name, 100)];
  if (options.deadlineMs !== undefined) {
    const { min, max } = retryPolicyLimits.deadlineMs;
    if (
      !Number.isInteger(options.deadlineMs) ||
      options.deadlineMs < min ||
      options.deadlineMs > max
    ) {
      problems.push(
        `deadlineMs must be an integer from ${min} to ${max}, got ${options.deadlineMs}`,
      );
    }
  }
  if (options.debounce !== undefined) problems.push(...debounceProblems(options.debounce));
  if (options.attributes !== undefined && typeof options.attributes !== 'function') {
    problems.push('attributes must be a function of the input');
  }
  if (typeof options.input?.safeParse !== 'function') problems.push('input must be a zod schema');
  const entries = Object.entries(options.steps ?? {});
  if (entries.length === 0) problems.push('a workflow needs at least one step');
  for (const [name, definition] of entries) {
    problems.push(...nameProblems(`step name ${JSON.stringify(name)}`, name));
    const seen = new Set<string>();
    for (const upstream of definition.after) {
      if (seen.has(upstream)) problems.push(`step "${name}" lists "${upstream}" twice in after`);
      seen.add(upstream);
      if (upstream === name) problems.push(`step "${name}" cannot run after itself`);
      else if (!Object.hasOwn(options.steps, upstream)) {
        problems.push(`step "${name}" runs after unknown step "${upstream}"`);
      }
    }
  }
  if (problems.length > 0) throw new DefinitionError(subject, problems);

  const order = topologicalOrder(entries.map(([name, definition]) => [name, definition.after]));
  if ('cycle' in order) {
    throw new DefinitionError(subject, [`steps form a cycle: ${order.cycle.join(' → ')}`]);
  }
  const byName = new Map(entries);
  const version =
    options.version ??
    shapeDigest({
      steps: order.names.map((name) => ({ ...(byName.get(name) as StepDefinition), name })),
    });
  const steps = order.names.map((name) => {
    const definition = namedMapChild(
      byName.get(name) as StepDefinition,
      options.name,
      name,
      version,
    ) as StepDefinition<z.output<TSchema>>;
    const downstream = entries
      .filter(([, other]) => other.after.includes(name))
      .map(([other]) => other);
    return Object.freeze({ ...definition, name, downstream: Object.freeze(downstream) });
  });
  return Object.freeze({
    name: options.name,
    ...(options.version === undefined ? {} : { version: options.version }),
    input: options.input,
    idempotencyKey: options.idempotencyKey ?? null,
    deadlineMs: options.deadlineMs ?? null,
    debounce: options.debounce === undefined ? null : Object.freeze({ ...options.debounce }),
    ...(options.attributes === undefined ? {} : { attributes: options.attributes }),
    steps: Object.freeze(steps),
  });
}

/** The step named `name`, or a clear error. */
export function getStep<TSchema extends z.ZodType>(
  definition: WorkflowDefinition<TSchema>,
  name: string,
): WorkflowStep<z.output<TSchema>> {
  const found = definition.steps.find((candidate) => candidate.name === name);
  if (found === undefined)
    throw new RangeError(`workflow "${definition.name}" has no step "${name}"`);
  return found;
}

function nameProblems(label: string, name: unknown, maxLength = maxNameLength): string[] {
  if (typeof name !== 'string' || !namePattern.test(name) || name.length > maxLength) {
    return [
      `${label} must be lowercase letters, digits, "_" or "-", start with a letter, and be at most ${maxLength} characters (got ${JSON.stringify(name)})`,
    ];
  }
  return [];
}

/** Kahn's algorithm, keeping declaration order among ready steps; reports one cycle if any. */
function topologicalOrder(
  nodes: readonly (readonly [string, readonly string[]])[],
): { names: string[] } | { cycle: string[] } {
  const names: string[] = [];
  const placed = new Set<string>();
  while (names.length < nodes.length) {
    const ready = nodes.find(
      ([name, after]) => !placed.has(name) && after.every((up) => placed.has(up)),
    );
    if (ready === undefined)
      return { cycle: findCycle(nodes.filter(([name]) => !placed.has(name))) };
    names.push(ready[0]);
    placed.add(ready[0]);
  }
  return { names };
}

function findCycle(remaining: readonly (readonly [string, readonly string[]])[]): string[] {
  const after = new Map(remaining);
  // Every remaining node has an unplaced upstream, so walking upstream must revisit a node.
  const path: string[] = [];
  let current = remaining[0]?.[0] as string;
  while (!path.includes(current)) {
    path.push(current);
    current = (after.get(current) ?? []).find((up) => after.has(up)) as string;
  }
  const cycle = path.slice(path.indexOf(current));
  return [...cycle.reverse(), cycle[0] as string];
}
