import type { z } from 'zod';
import type { AnyWorkflowDefinition, Tolerance } from './child-workflows';
import {
  DefinitionError,
  defineWorkflow,
  type StepOptions,
  step,
  type WorkflowDefinition,
  type WorkflowOptions,
} from './define-workflow';
import { type EventKeyContext, type EventStepOptions, event } from './event-step';
import { map as mapStep } from './map-step';
import type {
  MapChildResult,
  MapInputChecked,
  MapInputProblem,
  MapOutput,
  MapStepOptions,
  Omitted,
} from './map-step-options';
import type { StepContext } from './step-context';
import type { UpstreamResult } from './upstream-result';

export type { TypedStepDefinition } from './typed-step';
export type { StoredJson, UpstreamResult } from './upstream-result';

/** The workflow-level options of `defineWorkflow`, without the steps. */
export type WorkflowHeader<TSchema extends z.ZodType> = Omit<WorkflowOptions<TSchema>, 'steps'>;

/** A step definition `defineWorkflow` accepts for a workflow of input `TSchema`. */
export type WorkflowStepDefinition<TSchema extends z.ZodType> =
  WorkflowOptions<TSchema>['steps'][string];

/** `ctx` of a builder step: the input typed by the schema, and `results` by upstream step. */
export interface TypedStepContext<TInput, TResults extends Readonly<Record<string, unknown>>>
  extends StepContext<TInput> {
  /** Results of the steps this one runs after, directly or transitively, by step name. */
  readonly results: TResults;
}

/** What the builder knows of each declared step, by name. */
type Declared = Readonly<Record<string, { readonly result: unknown; readonly upstream: string }>>;

/** The steps a step runs after directly (`TAfter`) or transitively. */
type UpstreamOf<TSteps extends Declared, TAfter extends keyof TSteps> =
  | TAfter
  | TSteps[TAfter]['upstream'];

type With<TSteps extends Declared, TName extends string, TResult, TUpstream extends string> = {
  readonly [Name in keyof TSteps | TName]: Name extends TName
    ? { readonly result: TResult; readonly upstream: TUpstream }
    : TSteps[Name];
};

/** A new step's name: a name declared already, or not a literal, is a type error that says so. */
type NewName<TName extends string, TSteps extends Declared> = string extends TName
  ? 'a step name must be a string literal'
  : TName extends keyof TSteps
    ? `step "${TName}" is declared already`
    : TName;

/** `StepOptions` of a builder step: `after` names earlier steps, `ctx` is typed. */
export type BuilderStepOptions<
  TInput,
  TSteps extends Declared,
  TAfter extends keyof TSteps & string,
  TReturn,
> = Omit<StepOptions<TInput, unknown>, 'after' | 'run'> & {
  /** Names of earlier steps that must succeed first. */
  readonly after?: readonly TAfter[];
  readonly run: (
    // Written out rather than named, so that a type error shows the results it means.
    context: TypedStepContext<
      TInput,
      { readonly [Name in UpstreamOf<TSteps, TAfter>]: TSteps[Name]['result'] }
    >,
  ) => TReturn;
};

/**
 * Declares a workflow step by step: `workflow({ name, input, ... }).step(...).step(...).build()`.
 * Each step may run only after steps declared before it (so the steps form a DAG), and the
 * compiler knows `ctx.input` from the schema and `ctx.results.<step>` for every step upstream,
 * directly or transitively, as `UpstreamResult` of what its `run` returns. Reading another
 * step's result, naming an unknown step in `after` and repeating a name are type errors.
 * `build()` returns what `defineWorkflow` returns for the same steps, checked the same way.
 */
export class WorkflowBuilder<
  TSchema extends z.ZodType,
  TSteps extends Declared = Record<never, never>,
> {
  readonly #header: WorkflowHeader<TSchema>;
  readonly #steps: readonly (readonly [string, WorkflowStepDefinition<TSchema>])[];

  /** Use `workflow(header)`. */
  constructor(
    header: WorkflowHeader<TSchema>,
    steps: readonly (readonly [string, WorkflowStepDefinition<TSchema>])[] = [],
  ) {
    this.#header = header;
    this.#steps = steps;
  }

  /**
   * Adds a step with `run` and the `StepOptions` of `step(...)`; `after` names earlier steps.
   * The builder is immutable: this returns a new one.
   */
  step<TName extends string, TReturn, TAfter extends keyof TSteps & string = never>(
    name: NewName<TName, TSteps>,
    options: BuilderStepOptions<z.output<TSchema>, TSteps, TAfter, TReturn>,
  ): WorkflowBuilder<
    TSchema,
    With<TSteps, TName, UpstreamResult<TReturn>, UpstreamOf<TSteps, TAfter>>
  > {
    // The engine gives `run` the results of exactly the steps upstream (claimed-task.ts), which
    // is what its typed context promises.
    const run = options.run as unknown as StepOptions<z.output<TSchema>, unknown>['run'];
    return new WorkflowBuilder(this.#header, [
      ...this.#steps,
      [name, step<z.output<TSchema>>({ ...options, run })],
    ]);
  }

  /**
   * Adds an event step (`event(...)`, R37): `after` names earlier steps, `key` reads the input
   * and their results typed, and downstream steps read the payload as its schema parses it.
   */
  event<
    TName extends string,
    TPayload extends z.ZodType = z.ZodType<unknown>,
    TAfter extends keyof TSteps & string = never,
  >(
    name: NewName<TName, TSteps>,
    options: EventStepOptions<
      TAfter,
      TPayload,
      z.output<TSchema>,
      { readonly [Name in UpstreamOf<TSteps, TAfter>]: TSteps[Name]['result'] }
    >,
  ): WorkflowBuilder<
    TSchema,
    With<TSteps, TName, UpstreamResult<z.output<TPayload>>, UpstreamOf<TSteps, TAfter>>
  > {
    const key = options.key as string | ((context: EventKeyContext<z.output<TSchema>>) => string);
    return new WorkflowBuilder(this.#header, [
      ...this.#steps,
      [name, event<TPayload, TAfter, z.output<TSchema>>({ ...options, key })],
    ]);
  }

  /**
   * Adds a map step (`map(...)`, R44): `after` names earlier steps, `over` and `input` read the
   * input and their results typed, what each child is given is checked against the child's
   * input schema, and downstream steps read the children's results (with `tolerate`, their
   * outcomes) as a list.
   */
  map<
    TName extends string,
    const TElement,
    TChild extends AnyWorkflowDefinition = never,
    TReturn = never,
    TChildSchema extends z.ZodType = z.ZodUnknown,
    const TGiven = Omitted,
    TAfter extends keyof TSteps & string = never,
    TTolerate extends Tolerance | undefined = undefined,
  >(
    name: NewName<TName, TSteps>,
    options: MapStepOptions<
      TAfter,
      z.output<TSchema>,
      { readonly [Name in UpstreamOf<TSteps, TAfter>]: TSteps[Name]['result'] },
      TElement,
      TGiven,
      TTolerate,
      TChild,
      TChildSchema,
      TReturn
    >,
  ): MapInputChecked<
    MapInputProblem<TElement, TGiven, TChild, TChildSchema>,
    WorkflowBuilder<
      TSchema,
      With<
        TSteps,
        TName,
        UpstreamResult<MapOutput<MapChildResult<TChild, TReturn>, TTolerate>>,
        UpstreamOf<TSteps, TAfter>
      >
    >
  >;
  map(name: string, options: object): unknown {
    return new WorkflowBuilder(this.#header, [
      ...this.#steps,
      [name, mapStep(options as Parameters<typeof mapStep>[0])],
    ]);
  }

  /** Adds a step of any kind whose type names its `after` (`TypedStepDefinition`). */
  add<
    TName extends string,
    TDefinition extends WorkflowStepDefinition<TSchema> & {
      readonly after: readonly (keyof TSteps & string)[];
    },
  >(
    name: NewName<TName, TSteps>,
    definition: TDefinition,
  ): WorkflowBuilder<
    TSchema,
    With<
      TSteps,
      TName,
      UpstreamResult<OutputOf<TDefinition>>,
      UpstreamOf<TSteps, TDefinition['after'][number]>
    >
  > {
    return new WorkflowBuilder(this.#header, [...this.#steps, [name, definition]]);
  }

  /**
   * The frozen definition: `defineWorkflow` of the steps in declaration order, after checking
   * what the builder's types promise (no name twice, `after` names earlier steps only).
   */
  build(): WorkflowDefinition<TSchema, WorkflowResultOf<TSteps>> {
    const subject = `workflow ${JSON.stringify(this.#header.name)}`;
    const problems = declarationProblems(this.#steps);
    const options: WorkflowOptions<TSchema> = {
      ...this.#header,
      steps: Object.fromEntries(this.#steps),
    };
    let definition: WorkflowDefinition<TSchema>;
    try {
      definition = defineWorkflow(options);
    } catch (error) {
      if (!(error instanceof DefinitionError) || problems.length === 0) throw error;
      throw new DefinitionError(subject, [...problems, ...error.problems], error.code);
    }
    if (problems.length > 0) {
      throw new DefinitionError(subject, problems);
    }
    // The result type is the compiler's knowledge of the sink steps; nothing to set at run time.
    return definition as WorkflowDefinition<TSchema, WorkflowResultOf<TSteps>>;
  }
}

/**
 * Starts a typed workflow definition (see `WorkflowBuilder`); `header` is `defineWorkflow`'s
 * options without `steps`.
 *
 * ```ts
 * const publishNote = workflow({ name: 'publish-note', input, idempotencyKey: (i) => i.noteId })
 *   .step('render', { queue: 'cpu', run: (ctx) => ({ html: `<h1>${ctx.input.title}</h1>` }) })
 *   .step('review', { after: ['render'], run: (ctx) => ({ ok: ctx.results.render.html !== '' }) })
 *   .build();
 * ```
 */
export function workflow<TSchema extends z.ZodType>(
  header: WorkflowHeader<TSchema>,
): WorkflowBuilder<TSchema> {
  return new WorkflowBuilder(header);
}

/** The steps no step runs after: a workflow's result comes from them (R45). */
type SinkNames<TSteps extends Declared> = Exclude<
  keyof TSteps & string,
  TSteps[keyof TSteps]['upstream']
>;

type IsUnion<T> = [T] extends [UnionToIntersection<T>] ? false : true;
type UnionToIntersection<T> = (T extends unknown ? (value: T) => void : never) extends (
  value: infer TAll,
) => void
  ? TAll
  : never;

/**
 * The result of a workflow of these steps (R45): its only sink step's result, or an object of
 * its sink steps' results by name.
 */
type WorkflowResultOf<TSteps extends Declared> =
  IsUnion<SinkNames<TSteps>> extends true
    ? { readonly [Name in SinkNames<TSteps>]: TSteps[Name]['result'] }
    : TSteps[SinkNames<TSteps>]['result'];

type OutputOf<TDefinition> = TDefinition extends {
  readonly '~output'?: { readonly type: infer TOutput };
}
  ? TOutput
  : unknown;

function declarationProblems(
  steps: readonly (readonly [string, { readonly after: readonly string[] }])[],
): string[] {
  const problems: string[] = [];
  const names = steps.map(([name]) => name);
  for (const [index, [name, definition]] of steps.entries()) {
    if (names.indexOf(name) < index) problems.push(`step "${name}" is declared twice`);
    for (const upstream of definition.after) {
      if (names.indexOf(upstream) > index) {
        problems.push(`step "${name}" runs after "${upstream}", which is declared after it`);
      }
    }
  }
  return problems;
}
