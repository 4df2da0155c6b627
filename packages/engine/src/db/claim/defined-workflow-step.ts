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
      select not exists (
          select 1
          from unnest(coalesce(string_to_array(w.steps, ','), array[${task}.step])) as known(step)
          where w.name || '/' || known.step <> all(${keys}))
      from causeway_workflows as w where w.id = ${task}.workflow_id), false)`;
}
