import { type RawBuilder, sql } from 'kysely';
import { constantArrayLiteral } from '../array-literal';

/**
 * A ready task is one this engine can run and settle: its step, and every step of its
 * workflow (`steps`, written at submit), are steps this engine defines (`stepKeys`,
 * `workflow/step`). In a rolling deploy, another version's workflows, and workflows a newer
 * version gave steps this one does not know, wait for a worker that knows them, instead of
 * filling every claim of this one while its own tasks wait behind them, or having a step
 * completed by a worker that could not promote the new steps waiting for it. Read through the
 * workflow's primary key, once per ready row the claim reads; a workflow row without `steps`
 * (not written by a submit) is judged by the task's step alone (a submitted workflow's steps
 * include its tasks' own).
 */
export function definedWorkflowStep(task: RawBuilder<unknown>, stepKeys: readonly string[]) {
  const keys = sql`${constantArrayLiteral(stepKeys)}::text[]`;
  return sql`coalesce((
      select ${everyStepDefined(sql`w`, sql`array[${task}.step]`, keys)}
      from causeway_workflows as w where w.id = ${task}.workflow_id), false)`;
}

/**
 * Whether every step the workflow row `workflow` was submitted with (its `steps`, or else the
 * steps `otherwise` gives) is one of `keys` (`workflow/step`): the one test of R54, for a row
 * the statement already has (the send locks it) or probes (`definedWorkflowStep`).
 */
export function everyStepDefined(
  workflow: RawBuilder<unknown>,
  otherwise: RawBuilder<unknown>,
  keys: RawBuilder<unknown>,
): RawBuilder<boolean> {
  return sql<boolean>`not exists (
          select 1
          from unnest(coalesce(string_to_array(${workflow}.steps, ','), ${otherwise})) as known(step)
          where ${workflow}.name || '/' || known.step <> all(${keys}))`;
}
