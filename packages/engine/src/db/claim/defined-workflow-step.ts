import { type RawBuilder, sql } from 'kysely';
import { constantArrayLiteral } from '../array-literal';

/**
 * A ready task is one this engine can run and settle (R54): its workflow's version is one
 * this engine defines (`workflow@version` in `stepKeys`). In a rolling deploy, another
 * version's workflows wait for a worker that defines that version, instead of filling every
 * claim of this one while its own tasks wait behind them, or having a step completed by a
 * worker that could not decide what follows it. Read through the workflow's primary key, once
 * per ready row the claim reads. A workflow stored without a version (before 0036) is judged
 * by its steps (`workflow/step` of the latest versions), or, without `steps` either, by the
 * task's step alone.
 */
export function definedWorkflowStep(task: RawBuilder<unknown>, stepKeys: readonly string[]) {
  const keys = sql`${constantArrayLiteral(stepKeys)}::text[]`;
  return sql`coalesce((
      select ${everyStepDefined(sql`w`, sql`array[${task}.step]`, keys)}
      from causeway_workflows as w where w.id = ${task}.workflow_id), false)`;
}

/**
 * Whether this engine defines the workflow row `workflow` (R54): its `name@version` is one of
 * `keys`; for a row without a version, every step it was submitted with (its `steps`, or else
 * the steps `otherwise` gives) is one of `keys` (`workflow/step`). The one test of R54, for a
 * row the statement already has (the send locks it) or probes (`definedWorkflowStep`).
 */
export function everyStepDefined(
  workflow: RawBuilder<unknown>,
  otherwise: RawBuilder<unknown>,
  keys: RawBuilder<unknown>,
): RawBuilder<boolean> {
  return sql<boolean>`case when ${workflow}.version is not null
          then ${workflow}.name || '@' || ${workflow}.version = any(${keys})
          else not exists (
          select 1
          from unnest(coalesce(string_to_array(${workflow}.steps, ','), ${otherwise})) as known(step)
          where ${workflow}.name || '/' || known.step <> all(${keys})) end`;
}
