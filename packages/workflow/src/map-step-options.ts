/**
 * The options of a map step (R44) as the compiler sees them: what `over` and `input` read,
 * what each child takes, and what the step produces (R45). `map(...)` and the builder's
 * `.map(...)` take the same shapes; `map-step.ts` checks them at run time.
 */
import type { z } from 'zod';
import type {
  AnyWorkflowDefinition,
  ChildInput,
  ChildOutcome,
  MapContext,
  Tolerance,
} from './child-workflows';
import type { DeepReadonly } from './deep-freeze';
import type { StepOptions } from './define-workflow';
import type { StepContext } from './step-context';
import type { UpstreamResult } from './upstream-result';

/** What `over` and `input` of a map step read: the parent's input and upstream results. */
export type MapStepContext<TInput, TResults> = MapContext<DeepReadonly<TInput>, TResults>;

declare const omitted: unique symbol;
/** What a map step's `input` gives when there is none: each element goes to its child as is. */
export type Omitted = typeof omitted;

/**
 * The options of a map step. Give `workflow` (children of a definition) or `run` (children of
 * one step each: an implicit workflow named `<parent>/<step>`), never both.
 */
export interface MapStepOptions<
  TAfter extends string,
  TInput,
  TResults,
  TElement,
  TGiven,
  TTolerate extends Tolerance | undefined,
  TChild extends AnyWorkflowDefinition,
  TSchema extends z.ZodType,
  TReturn,
> extends ChildStepOptions {
  /** Names of the steps that must succeed before the list is read. */
  readonly after?: readonly TAfter[];
  /** The list: one child starts per element, once the upstream steps succeeded. */
  readonly over: (context: MapStepContext<TInput, TResults>) => readonly TElement[];
  /** The child's input for an element; without it, the element itself. */
  readonly input?: (
    element: TElement,
    index: number,
    context: MapStepContext<TInput, TResults>,
  ) => TGiven;
  /** The child workflow, one per element; its schema checks what each child is given. */
  readonly workflow?: TChild;
  /** A one-step child's input schema; without it, the child takes any JSON value. */
  readonly inputSchema?: TSchema;
  /** A one-step child's step: `ctx.input` is the child's input, as `inputSchema` gives it. */
  readonly run?: (context: StepContext<z.output<TSchema>>) => TReturn;
  /**
   * How many children may fail before the step does (R45); with it, the step's output lists
   * each child's outcome (`ChildOutcome`) instead of its result.
   */
  readonly tolerate?: TTolerate;
  /** The most children the list may hold (default 10,000, at most 100,000). */
  readonly maxChildren?: number;
  /**
   * At most this many of its children's tasks run at once (R44): a concurrency key (R50) of
   * group `map:<workflow>/<step>` and the step's task as key, on every step of the children.
   */
  readonly concurrency?: number;
}

/**
 * Why what each child is given, `input`'s return or the element, is not what the child takes,
 * or never. Read-only or not does not matter: it goes to the child as JSON.
 */
export type MapInputProblem<TElement, TGiven, TChild, TSchema extends z.ZodType> = InputProblem<
  [TGiven] extends [Omitted] ? TElement : TGiven,
  [TChild] extends [never] ? z.input<TSchema> : ChildInput<TChild>,
  [TGiven] extends [Omitted]
    ? 'the elements are not the child workflow input: give input'
    : 'input gives what the child workflow input is not'
>;

type InputProblem<TGiven, TChildInput, TProblem> = [TGiven] extends [DeepReadonly<TChildInput>]
  ? never
  : TProblem;

/**
 * What a map step's declaration gives: `TDeclared`, or when the children would not take what
 * they are given, a mistake that says so; the compiler then refuses to use it (the next
 * `.step(...)` or `.build()`, or `defineWorkflow`'s `steps`). The check sits in the result
 * because TypeScript infers the element type from `over` only after it checks the arguments.
 */
export type MapInputChecked<TProblem, TDeclared> = [TProblem] extends [never]
  ? TDeclared
  : MapInputMistake<TProblem>;

/** A map step whose children would not take what they are given (type only). */
export interface MapInputMistake<TProblem> {
  readonly mistake: TProblem;
}

/** The result of each child: its workflow's, or the one step's output (`run`). */
export type MapChildResult<TChild, TReturn> = [TChild] extends [never]
  ? UpstreamResult<TReturn>
  : ResultOf<TChild>;

/** The options of `step(...)` that a one-step child's step takes. */
export type ChildStepOptions = Pick<
  StepOptions<unknown, unknown>,
  'queue' | 'reentrant' | 'maxAttempts' | 'backoff' | 'timeoutMs'
>;

/** What a map step produces (R45): each child's result in input order, or its outcome. */
export type MapOutput<TResult, TTolerate> = [TTolerate] extends [undefined]
  ? readonly TResult[]
  : readonly ChildOutcome<TResult>[];

/** A definition's result, as far as its type carries it (`WorkflowDefinition`'s `TResult`). */
export type ResultOf<TDefinition> = TDefinition extends {
  '~result'?(result: infer TResult): void;
}
  ? TResult
  : unknown;
