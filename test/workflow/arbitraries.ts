/**
 * Generators and run settings shared by the property tests of the pure workflow machine.
 *
 * Everything random comes from fast-check (never Math.random or Date.now), so a failure is
 * reproduced from the seed and path that fast-check prints. Error categories and actor kinds
 * are drawn from the contract's lists (contract-tables.ts), not the code's, so a category or
 * kind the code lost is still sent to it.
 */
import {
  type Actor,
  type ActorKind,
  type BackoffPolicy,
  defineWorkflow,
  type ErrorCategory,
  event,
  retryPolicyLimits,
  step,
  type WorkflowDefinition,
} from '@causeway/workflow/internal';
import fc from 'fast-check';
import { z } from 'zod';
import { specActorKinds, specErrorCategories } from '../helpers/contract-tables';

// ---------------------------------------------------------------------------------------------
// Run settings

/** Runs per property: 1,000 by default (CI), more or fewer through CAUSEWAY_FC_RUNS. */
export const numRuns = readPositiveInteger('CAUSEWAY_FC_RUNS', 1_000);

const seed = readOptional('CAUSEWAY_FC_SEED');
const path = readOptional('CAUSEWAY_FC_PATH');

/** Whether this run replays one recorded case instead of exploring fresh ones. */
export const isReplaying = seed !== undefined || path !== undefined;

/**
 * fast-check parameters for `fc.assert`. fast-check prints the seed and path of a failure;
 * setting CAUSEWAY_FC_SEED and CAUSEWAY_FC_PATH replays exactly that counterexample.
 */
export function propertyParameters<T>(): fc.Parameters<T> {
  return {
    numRuns,
    ...(seed === undefined ? {} : { seed: readInteger('CAUSEWAY_FC_SEED', seed) }),
    ...(path === undefined ? {} : { path }),
  };
}

/**
 * fast-check also prints a `replayPath` next to a failing command sequence; passing it back
 * through CAUSEWAY_FC_REPLAY_PATH (with the seed and path) replays the shrunk sequence directly.
 */
export const commandsReplayPath = readOptional('CAUSEWAY_FC_REPLAY_PATH');

/** A vitest timeout that grows with the number of runs, so CAUSEWAY_FC_RUNS=20000 still works. */
export function timeoutForRuns(msPerRun: number): number {
  return 30_000 + numRuns * msPerRun;
}

function readOptional(name: string): string | undefined {
  const text = process.env[name];
  return text === undefined || text.trim() === '' ? undefined : text.trim();
}

function readPositiveInteger(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = readInteger(name, text);
  if (value < 1) throw new RangeError(`${name} must be a positive integer, got ${text}`);
  return value;
}

function readInteger(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`${name} must be an integer, got ${text}`);
  return value;
}

// ---------------------------------------------------------------------------------------------
// Workflows

/** Step names in declaration order; readable in counterexamples. */
export const stepNames = ['render', 'review', 'publish', 'notify', 'archive', 'audit'] as const;

/** The event names and keys event steps wait for: few, so that steps share them (R38). */
export const eventNames = ['note.approved', 'ping.sent'] as const;
export const eventKeys = ['k1', 'k2'] as const;

/** An event step (R37): it waits for `name` with a constant `key`, for `timeoutMs`. */
export interface EventSpec {
  readonly name: string;
  readonly key: string;
  readonly timeoutMs: number;
  /** It declares an `onTimeout` output: a wait that gives up succeeds instead of dying (R39). */
  readonly onTimeout: boolean;
  /** Its key function throws (a bug in user code): the step can never wait (R58). */
  readonly keyFails: boolean;
}

/** What a key function with a bug throws (`EventSpec.keyFails`). */
export const keyBugMessage = 'the key function has a bug';

/** Plain data describing one step, printed as is in a counterexample. */
export interface StepSpec {
  readonly name: string;
  /** Only earlier steps, so the steps always form a DAG. */
  readonly after: readonly string[];
  readonly reentrant: boolean;
  readonly maxAttempts: number;
  readonly backoff: BackoffPolicy;
  readonly timeoutMs: number;
  readonly deadlineMs: number | null;
  /** R36: queue the step this long after its upstream steps succeeded. */
  readonly delayMs: number | null;
  /**
   * Null for a step that runs code; else an event step, which has none of the fields above
   * but `after` (they are neutral: deadline and delay null, one attempt).
   */
  readonly event: EventSpec | null;
}

export interface WorkflowSpec {
  readonly steps: readonly StepSpec[];
  /** The workflow's total budget (R29), shared by every step. */
  readonly deadlineMs: number | null;
  /** Declare the steps last-to-first, so `defineWorkflow` has to sort them itself. */
  readonly declareReversed: boolean;
  /** Lease length the simulated engine uses (R7); lease expiry happens this long after a claim. */
  readonly leaseMs: number;
  /** R36: `submit(..., { delayMs })`, delaying the first steps; 0 for none. */
  readonly submitDelayMs: number;
}

/** A small backoff, so that retries land both before and after a deadline. */
export const backoffArbitrary: fc.Arbitrary<BackoffPolicy> = fc
  .record({
    initialIntervalMs: fc.integer({ min: 0, max: 2_000 }),
    backoffCoefficient: fc.constantFrom(1, 1.5, 2, 3),
    extraCapMs: fc.integer({ min: 0, max: 8_000 }),
  })
  .map(({ initialIntervalMs, backoffCoefficient, extraCapMs }) => ({
    initialIntervalMs,
    backoffCoefficient,
    maximumIntervalMs: initialIntervalMs + extraCapMs,
  }));

/**
 * Deadlines of a few seconds (the clock commands move time by the same order of magnitude),
 * absent `nullWeight` times out of `nullWeight + 1`.
 */
function deadlineArbitrary(nullWeight: number): fc.Arbitrary<number | null> {
  return fc.oneof(
    { arbitrary: fc.constant(null), weight: nullWeight },
    { arbitrary: fc.integer({ min: 500, max: 40_000 }), weight: 1 },
  );
}

/** Timeouts of the same order as the deadlines and clock moves, so either may come first. */
const eventSpecArbitrary: fc.Arbitrary<EventSpec> = fc.record({
  name: fc.constantFrom(...eventNames),
  key: fc.constantFrom(...eventKeys),
  timeoutMs: fc.integer({ min: 1, max: 20_000 }),
  onTimeout: fc.boolean(),
  // One event step in four has a key function that throws.
  keyFails: fc.integer({ min: 0, max: 3 }).map((roll) => roll === 0),
});

function stepSpecArbitrary(index: number): fc.Arbitrary<StepSpec> {
  const earlier = stepNames.slice(0, index);
  return fc
    .record({
      // One bit per earlier step: shrinks towards "no dependencies".
      afterMask: fc.integer({ min: 0, max: 2 ** index - 1 }),
      reentrant: fc.boolean(),
      maxAttempts: fc.integer({ min: 1, max: 4 }),
      backoff: backoffArbitrary,
      timeoutMs: fc.integer({ min: 1, max: 5_000 }),
      deadlineMs: deadlineArbitrary(4),
      delayMs: fc.oneof(
        { arbitrary: fc.constant(null), weight: 3 },
        { arbitrary: fc.integer({ min: 1, max: 5_000 }), weight: 1 },
      ),
      // One step in three waits for an event; shrinks towards a step that runs code.
      waits: fc.oneof(
        { arbitrary: fc.constant(null), weight: 2 },
        { arbitrary: eventSpecArbitrary, weight: 1 },
      ),
    })
    .map(({ afterMask, waits, ...rest }) => ({
      name: stepNames[index] as string,
      after: earlier.filter((_, bit) => (afterMask & (1 << bit)) !== 0),
      ...rest,
      ...(waits === null ? {} : { maxAttempts: 1, deadlineMs: null, delayMs: null }),
      event: waits,
    }));
}

/** A DAG of 1–6 steps with random dependencies, policies and deadlines. */
export const workflowSpecArbitrary: fc.Arbitrary<WorkflowSpec> = fc
  .integer({ min: 1, max: stepNames.length })
  .chain((count) =>
    fc.record({
      steps: fc.tuple(...Array.from({ length: count }, (_, index) => stepSpecArbitrary(index))),
      deadlineMs: deadlineArbitrary(2),
      declareReversed: fc.boolean(),
      leaseMs: fc.integer({ min: 100, max: 20_000 }),
      submitDelayMs: fc.oneof(
        { arbitrary: fc.constant(0), weight: 4 },
        { arbitrary: fc.integer({ min: 1, max: 5_000 }), weight: 1 },
      ),
    }),
  );

/** Builds the definition through the public API (`defineWorkflow`/`step`), as a user would. */
export function buildDefinition(spec: WorkflowSpec): WorkflowDefinition {
  const declared = spec.declareReversed ? [...spec.steps].reverse() : spec.steps;
  const steps = Object.fromEntries(
    declared.map((stepSpec) => [
      stepSpec.name,
      stepSpec.event === null
        ? step({
            after: stepSpec.after,
            reentrant: stepSpec.reentrant,
            maxAttempts: stepSpec.maxAttempts,
            backoff: stepSpec.backoff,
            timeoutMs: stepSpec.timeoutMs,
            ...(stepSpec.deadlineMs === null ? {} : { deadlineMs: stepSpec.deadlineMs }),
            ...(stepSpec.delayMs === null ? {} : { delayMs: stepSpec.delayMs }),
            run: () => ({}),
          })
        : event({
            after: stepSpec.after,
            name: stepSpec.event.name,
            key: stepSpec.event.keyFails
              ? () => {
                  throw new Error(keyBugMessage);
                }
              : stepSpec.event.key,
            timeoutMs: stepSpec.event.timeoutMs,
            ...(stepSpec.event.onTimeout ? { onTimeout: { timedOut: true } } : {}),
          }),
    ]),
  );
  return defineWorkflow({
    name: 'property-workflow',
    input: z.object({}),
    ...(spec.deadlineMs === null ? {} : { deadlineMs: spec.deadlineMs }),
    steps,
  }) as unknown as WorkflowDefinition;
}

// ---------------------------------------------------------------------------------------------
// Events' ingredients

/** Index of the targeted task; taken modulo the number of tasks. */
export const taskIndexArbitrary = fc.nat({ max: stepNames.length - 1 });

export const errorCategoryArbitrary: fc.Arbitrary<ErrorCategory> = fc.constantFrom(
  ...specErrorCategories,
);

/** A jitter sample in [0, 1): the seeded "random" a decision gets. Shrinks towards 0. */
export const jitterArbitrary = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

/** Mostly one of the actors the edge table expects for a command, sometimes any actor at all. */
export function actorKindArbitrary(...expected: readonly ActorKind[]): fc.Arbitrary<ActorKind> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...expected), weight: 9 },
    { arbitrary: fc.constantFrom(...specActorKinds), weight: 1 },
  );
}

/**
 * The actor a command acts as: workers and sweepers carry a holder, operators a name, a parent
 * step its task id.
 */
export function actorOf(kind: ActorKind): Actor {
  switch (kind) {
    case 'worker':
      return { kind, name: 'host-a/4242/boot-1' };
    case 'sweeper':
      return { kind, name: 'host-b/77/boot-2' };
    case 'operator':
      return { kind, name: 'alice' };
    case 'outbox':
      return { kind, name: 'dispatcher-1' };
    case 'schedule':
      return { kind, name: 'morning-digest' };
    case 'parent':
      return { kind, name: 'task-parent-1' };
    default:
      return { kind };
  }
}

/** Arbitrary plain values used outside the model (retry policy). */
export const anyBackoffArbitrary: fc.Arbitrary<BackoffPolicy> = fc
  .record({
    initialIntervalMs: fc.oneof(
      fc.integer({ min: 0, max: 10_000 }),
      fc.integer({ min: 0, max: retryPolicyLimits.intervalMs.max }),
    ),
    backoffCoefficient: fc.double({
      min: retryPolicyLimits.backoffCoefficient.min,
      max: retryPolicyLimits.backoffCoefficient.max,
      noNaN: true,
    }),
    capFraction: fc.double({ min: 0, max: 1, noNaN: true }),
  })
  .map(({ initialIntervalMs, backoffCoefficient, capFraction }) => ({
    initialIntervalMs,
    backoffCoefficient,
    // Anywhere between the initial interval and the largest allowed cap.
    maximumIntervalMs: Math.round(
      initialIntervalMs + capFraction * (retryPolicyLimits.intervalMs.max - initialIntervalMs),
    ),
  }));
