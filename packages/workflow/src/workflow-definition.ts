/**
 * The shapes of a defined workflow, as data: the definition, its steps, what a step's `run` may
 * return, and the child workflows a step starts (R43) or maps over (R44). They refer to one
 * another (a definition holds steps, a map step holds a child definition), so they share this
 * file; `define-workflow.ts` and `child-workflows.ts` make them and re-export them.
 */

import type { z } from 'zod';
import type { WorkflowAttributes } from './attributes';
import type { ConcurrencyKey } from './concurrency-key';
import type { Debounce } from './debounce';
import type { EventWait } from './event-wait';
import type { StepRateLimit } from './rate-limit';
import type { RetryPolicy } from './retry-policy';
import type { StepContext } from './step-context';
import type { AwaitReceipt, SendRequest, SnoozeRequest } from './step-results';

/**
 * What `run` may return: an output, `awaitReceipt(...)`, `send(...)`, `snooze(...)` or
 * `startChildren(...)` / `startChild(...)`.
 */
export type StepReturn<TOutput> =
  | TOutput
  | AwaitReceipt
  | SendRequest
  | SnoozeRequest
  | StartChildren;

/** A step before it is named by its key in `steps`. */
export interface StepDefinition<TInput = unknown, TOutput = unknown> {
  readonly after: readonly string[];
  readonly queue: string;
  readonly policy: RetryPolicy;
  /** Seconds of backlog its tasks may jump in their queue (R49); absent: 0. */
  readonly priority?: number;
  /** Its tasks' concurrency key (R50); absent: no limit but the queue's. */
  readonly concurrency?: ConcurrencyKey<TInput>;
  /** The engine-declared rate limit its tasks spend when claimed (R51); absent: none. */
  readonly rateLimit?: StepRateLimit<TInput>;
  /** An event step's wait (`event(...)`, R37); absent for a step that runs code. */
  readonly event?: EventWait;
  /** A map step's list and child workflow (`map(...)`, R44); absent for a step that runs code. */
  readonly map?: MapSpec;
  readonly run: (
    context: StepContext<TInput>,
  ) => Promise<StepReturn<TOutput>> | StepReturn<TOutput>;
}

/** A step of a defined workflow. */
export interface WorkflowStep<TInput = unknown> extends StepDefinition<TInput> {
  readonly name: string;
  /** Steps that list this one in `after`. */
  readonly downstream: readonly string[];
}

/**
 * A defined workflow. `TResult` is what it produces once it succeeded (R45: its only sink
 * step's output, or an object of its sink steps' outputs), as far as the compiler knows it:
 * the builder's `build()` carries it, `defineWorkflow` leaves it `unknown`.
 */
export interface WorkflowDefinition<TSchema extends z.ZodType = z.ZodType, TResult = unknown> {
  readonly name: string;
  /** The declared version (R54); absent: its workflows record a digest of its shape. */
  readonly version?: string;
  readonly input: TSchema;
  readonly idempotencyKey: ((input: z.output<TSchema>) => string) | null;
  readonly deadlineMs: number | null;
  /** Submits of one key supersede the workflow that has not started yet (R52). */
  readonly debounce: Debounce<z.output<TSchema>> | null;
  /** Its workflows' searchable attributes, from the input at admission (R55); absent: none. */
  readonly attributes?: (input: z.output<TSchema>) => WorkflowAttributes;
  /** Steps in a topological order (every step after all of its `after`), ties by declaration. */
  readonly steps: readonly WorkflowStep<z.output<TSchema>>[];
  /**
   * Type only, never set: the workflow's result, as a parent step reads it. A method's
   * parameter, so that a definition whose result type is known and one whose is not are
   * assignable to each other.
   */
  '~result'?(result: TResult): void;
}

export const childrenTag: unique symbol = Symbol.for('causeway.start-children');

/** How many failed children a step accepts before it fails (R45); absent: none (fail fast). */
export interface Tolerance {
  /** At most this many children may end `dead` or `cancelled`. */
  readonly failures?: number;
  /** At most this percentage (0–100) of the children may end `dead` or `cancelled`. */
  readonly percent?: number;
}

/** A step's request to start child workflows, returned from its `run`. */
export interface StartChildren {
  readonly [childrenTag]: true;
  readonly kind: 'start_children';
  /** A definition the engine knows, or its name. */
  readonly workflow: WorkflowDefinition | string;
  readonly inputs: readonly unknown[];
  /** `startChild`: the step's output is the one child's result, not a list. */
  readonly single: boolean;
  readonly detached: boolean;
  readonly tolerate: Tolerance | null;
  readonly maxChildren: number;
  /**
   * Attributes the call gives every child (R55), merged at admission with the parent's and the
   * child definition's (a key given twice must have one value); null when the call gives none.
   * As given: the engine checks them when it admits the children.
   */
  readonly attributes: WorkflowAttributes | null;
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
  readonly workflow: WorkflowDefinition;
  readonly input: ((element: unknown, index: number, context: MapContext) => unknown) | null;
  readonly tolerate: Tolerance | null;
  readonly maxChildren: number;
  /** At most this many of its children's tasks hold a slot at once (R44, R50); null: no limit. */
  readonly concurrency: number | null;
}
