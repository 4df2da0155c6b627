/**
 * A step definition whose type names the steps it runs after and what it produces, for
 * `WorkflowBuilder.add`: a factory of another step kind returns one so that the builder can
 * check its `after` and type what downstream steps read of it.
 */
export type TypedStepDefinition<TDefinition, TAfter extends string, TOutput> = TDefinition & {
  readonly after: readonly TAfter[];
  /**
   * Type only, never set: what the step produces, as a `run` would return it (downstream steps
   * read its `UpstreamResult`).
   */
  readonly '~output'?: { readonly type: TOutput };
};
