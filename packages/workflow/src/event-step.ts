import type { z } from 'zod';
import { jsonStorageProblem } from './admission';
import { DefinitionError, defaultQueue, type StepDefinition } from './define-workflow';
import type { EventKeyContext, EventWait } from './event-wait';
import { defaultRetryPolicy, type RetryPolicy } from './retry-policy';
import { StepError } from './step-error';
import type { TypedStepDefinition } from './typed-step';

export type { EventKeyContext, EventWait } from './event-wait';

export interface EventStepOptions<
  TAfter extends string,
  TSchema extends z.ZodType,
  TInput = unknown,
  TResults extends Readonly<Record<string, unknown>> = Readonly<Record<string, unknown>>,
> {
  /** Names of the steps that must succeed before the wait starts. */
  readonly after?: readonly TAfter[];
  readonly name: string;
  /** A constant, or a function of the input and upstream results (e.g. the note's id). */
  readonly key: string | ((context: EventKeyContext<TInput, TResults>) => string);
  /** A zod schema the payload must satisfy; without it, any JSON value. */
  readonly payload?: TSchema;
  /** How long to wait from entering `waiting` before giving up (R39). */
  readonly timeoutMs: number;
  /** The step's output when the wait gives up; without it, the step ends `dead`. */
  readonly onTimeout?: z.input<TSchema>;
}

/** Bounds of event names, keys and timeouts; outside them a definition or a send is refused. */
export const eventLimits = Object.freeze({
  maxNameLength: 100,
  maxKeyLength: 256,
  timeoutMs: { min: 1, max: 366 * 24 * 3_600_000 },
});

const eventNamePattern = /^[a-z][a-z0-9_.-]*$/;

/** Why `name` is not an event name, or null. */
export function eventNameProblem(name: unknown): string | null {
  if (
    typeof name !== 'string' ||
    !eventNamePattern.test(name) ||
    name.length > eventLimits.maxNameLength
  ) {
    return `an event name is lowercase letters, digits, ".", "_" or "-", starts with a letter, and is at most ${eventLimits.maxNameLength} characters (got ${JSON.stringify(name)})`;
  }
  return null;
}

/** Why `key` is not an event key, or null: a non-empty storable string within the limit. */
export function eventKeyProblem(key: unknown): string | null {
  if (typeof key !== 'string') return `an event key is a string (got ${typeof key})`;
  if (key.length === 0) return 'the event key is empty';
  if (key.length > eventLimits.maxKeyLength) {
    return `the event key is ${key.length} characters, over the limit of ${eventLimits.maxKeyLength}`;
  }
  const unstorable = jsonStorageProblem(key);
  if (unstorable !== null) return `the event key has ${unstorable}`;
  return null;
}

/**
 * Declares an event step (R37): it runs no code. Once its upstream steps succeeded it is
 * `waiting` for the first event of `name` whose key equals its `key` received after its
 * workflow was accepted, and succeeds with the event's payload as its output; after
 * `timeoutMs` it ends with `onTimeout`, or `dead`. Give it to `workflow(...).add(name, ...)`,
 * to `defineWorkflow({ steps })`, or use `workflow(...).event(name, ...)` to type `key`.
 */
export function event<
  TSchema extends z.ZodType = z.ZodType<unknown>,
  TAfter extends string = never,
  TInput = unknown,
>(
  options: EventStepOptions<TAfter, TSchema, TInput>,
): TypedStepDefinition<StepDefinition<TInput>, TAfter, z.output<TSchema>> {
  const problems: string[] = [];
  const nameProblem = eventNameProblem(options.name);
  if (nameProblem !== null) problems.push(nameProblem);
  const { min, max } = eventLimits.timeoutMs;
  if (!Number.isInteger(options.timeoutMs) || options.timeoutMs < min || options.timeoutMs > max) {
    problems.push(`timeoutMs must be an integer from ${min} to ${max}, got ${options.timeoutMs}`);
  }
  if (typeof options.key === 'string') {
    const keyProblem = eventKeyProblem(options.key);
    if (keyProblem !== null) problems.push(keyProblem);
  } else if (typeof options.key !== 'function') {
    problems.push('key must be a string or a function of { input, results }');
  }
  const schema = options.payload ?? null;
  if (schema !== null && typeof schema.safeParse !== 'function') {
    problems.push('payload must be a zod schema');
  }
  let onTimeout: { output: unknown } | null = null;
  if (options.onTimeout !== undefined && problems.length === 0) {
    const parsed =
      schema === null
        ? { success: true as const, data: options.onTimeout }
        : schema.safeParse(options.onTimeout);
    if (!parsed.success) problems.push("onTimeout does not match the step's payload schema");
    else {
      const storage = jsonStorageProblem(parsed.data);
      if (storage !== null) problems.push(`onTimeout cannot be stored: ${storage}`);
      else onTimeout = { output: parsed.data };
    }
  }
  if (problems.length > 0) throw new DefinitionError('invalid event step', problems);
  const constantKey = options.key;
  const key =
    typeof constantKey === 'string'
      ? () => constantKey
      : (constantKey as (context: EventKeyContext) => string);
  const wait: EventWait = Object.freeze({
    name: options.name,
    key,
    payload: schema,
    timeoutMs: options.timeoutMs,
    onTimeout: onTimeout === null ? null : Object.freeze(onTimeout),
  });
  const policy: RetryPolicy = Object.freeze({
    ...defaultRetryPolicy,
    maxAttempts: 1,
    wait: Object.freeze({ timeoutMs: options.timeoutMs, succeedsOnTimeout: onTimeout !== null }),
  });
  return Object.freeze({
    after: Object.freeze([...(options.after ?? [])]),
    queue: defaultQueue,
    policy,
    event: wait,
    run: () => {
      throw new StepError(
        'invalid_argument',
        `"${options.name}" is an event step: it runs no code`,
      );
    },
  });
}
