/**
 * Generators for the property tests of steps with child workflows (R43–R47): workflows
 * mixing steps that run code (and may return `startChildren(...)`) with map steps, and the
 * tallies the engine counts. Plain data, printed as is in a counterexample.
 */
import {
  type ChildTally,
  defaultRetryPolicy,
  defineWorkflow,
  type StepDefinition,
  step,
  type WorkflowDefinition,
} from '@causeway/workflow/internal';
import fc from 'fast-check';
import { z } from 'zod';
import { stepNames } from './arbitraries';

/** What a map step's `over` throws when its list fails (`MapStepSpec.listFails`, R58). */
export const listBugMessage = 'the list function has a bug';

/** A step that runs code: it may return `startChildren(...)` once leased (R43). */
export interface CodeStepSpec {
  readonly kind: 'code';
  readonly name: string;
  /** Only earlier steps, so the steps always form a DAG. */
  readonly after: readonly string[];
  readonly maxAttempts: number;
}

/** A map step (R44): one child per element of its list, started when its upstream succeeded. */
export interface MapStepSpec {
  readonly kind: 'map';
  readonly name: string;
  readonly after: readonly string[];
  /** How many elements `over` gives (0: the step succeeds at once with `[]`). */
  readonly listLength: number;
  /** `over` throws: the step can never start its children (R58). */
  readonly listFails: boolean;
  /** Failures its tolerance allows among its children (R45); 0 without one. */
  readonly allowedFailures: number;
}

export type ChildrenStepSpec = CodeStepSpec | MapStepSpec;

export interface ChildrenWorkflowSpec {
  readonly steps: readonly ChildrenStepSpec[];
  /** The workflow's absolute budget (R29), which its children share (R46); null for none. */
  readonly deadlineMs: number | null;
}

function childrenStepArbitrary(index: number): fc.Arbitrary<ChildrenStepSpec> {
  const name = stepNames[index] as string;
  const after = fc
    .integer({ min: 0, max: 2 ** index - 1 })
    .map((mask) => stepNames.slice(0, index).filter((_, bit) => (mask & (1 << bit)) !== 0));
  const code = fc.record({
    kind: fc.constant('code' as const),
    name: fc.constant(name),
    after,
    maxAttempts: fc.integer({ min: 1, max: 3 }),
  });
  const map = fc
    .record({
      kind: fc.constant('map' as const),
      name: fc.constant(name),
      after,
      listLength: fc.integer({ min: 0, max: 4 }),
      // One map step in four has an `over` that throws.
      listFails: fc.integer({ min: 0, max: 3 }).map((roll) => roll === 0),
      tolerance: fc.nat(),
    })
    .map(({ tolerance, ...rest }) => ({
      ...rest,
      allowedFailures: tolerance % (rest.listLength + 1),
    }));
  return fc.oneof(code, map);
}

/** A DAG of 1–4 steps, each running code or mapping, under a deadline or not. */
export const childrenWorkflowSpecArbitrary: fc.Arbitrary<ChildrenWorkflowSpec> = fc
  .integer({ min: 1, max: 4 })
  .chain((count) =>
    fc.record({
      steps: fc.tuple(...Array.from({ length: count }, (_, index) => childrenStepArbitrary(index))),
      deadlineMs: fc.oneof(
        { arbitrary: fc.constant(null), weight: 2 },
        { arbitrary: fc.integer({ min: 500, max: 40_000 }), weight: 1 },
      ),
    }),
  );

/**
 * The definition of a spec, as a user declares it. A map step is what `map(...)` gives: a step
 * whose policy says `map` (one attempt) and whose `run` never runs (R44).
 */
export function buildChildrenDefinition(spec: ChildrenWorkflowSpec): WorkflowDefinition {
  const steps = Object.fromEntries(
    spec.steps.map((stepSpec): [string, StepDefinition] => {
      if (stepSpec.kind === 'code') {
        return [
          stepSpec.name,
          step({ after: stepSpec.after, maxAttempts: stepSpec.maxAttempts, run: () => ({}) }),
        ];
      }
      const declared = step({
        after: stepSpec.after,
        maxAttempts: 1,
        run: () => {
          throw new Error('a map step runs no code');
        },
      });
      const policy = Object.freeze({ ...defaultRetryPolicy, maxAttempts: 1, map: true });
      return [stepSpec.name, Object.freeze({ ...declared, policy })];
    }),
  );
  return defineWorkflow({
    name: 'children-workflow',
    input: z.object({}),
    ...(spec.deadlineMs === null ? {} : { deadlineMs: spec.deadlineMs }),
    steps,
  }) as unknown as WorkflowDefinition;
}

/** A tally as the engine counts it: every child is succeeded, failed or still open. */
export const childTallyArbitrary: fc.Arbitrary<ChildTally> = fc
  .record({
    succeeded: fc.integer({ min: 0, max: 4 }),
    failed: fc.integer({ min: 0, max: 4 }),
    open: fc.integer({ min: 0, max: 4 }),
    tolerance: fc.nat(),
  })
  .map(({ succeeded, failed, open, tolerance }) => {
    const total = succeeded + failed + open;
    return { total, succeeded, failed, open, allowedFailures: tolerance % (total + 1) };
  });
