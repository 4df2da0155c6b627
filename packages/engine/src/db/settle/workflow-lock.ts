import { type RawBuilder, sql, type Transaction } from 'kysely';
import { databaseNow } from '../clock';
import { preparedSql } from '../database';
import {
  type LoadedRuns,
  loadedFromRows,
  type TaskWithWorkflowRow,
  taskColumns,
  workflowColumns,
} from '../locked-runs';
import type { CausewayDatabase } from '../schema';

/**
 * Locks workflows in id order (one lock order everywhere, so deciders never deadlock),
 * then all their task rows in id order, and reads database time: one round trip. The main
 * query locks `w` again (already ours): only a locked row is re-read at its latest version;
 * a plain join would return the statement snapshot's, stale if a writer we waited for
 * committed meanwhile.
 * With `skipLocked` a claimer never waits: a workflow another transaction holds is left
 * for the next claim. Task rows are locked too, so a fenced write (boundary, checkpoint)
 * or a renewal racing the decision waits and then sees it instead of being overwritten.
 */
export async function workflowLockWithTasks(
  tx: Transaction<CausewayDatabase>,
  workflowIds: readonly string[],
  options: { skipLocked: boolean },
): Promise<LoadedRuns> {
  if (workflowIds.length === 0) return { workflows: [], tasks: [], now: await databaseNow(tx) };
  return lockedRunsRead(
    tx,
    sql`select id from causeway_workflows
      where id = any(${[...workflowIds]}::uuid[])
      order by id
      for update ${options.skipLocked ? sql`skip locked` : sql``}`,
  );
}

/**
 * The workflows `locked` selects (and locks, in id order) with all their task rows, locked in
 * id order, and database time: the one statement behind every full decision's lock.
 */
export async function lockedRunsRead(
  tx: Transaction<CausewayDatabase>,
  locked: RawBuilder<unknown>,
): Promise<LoadedRuns> {
  const { rows } = await sql<TaskWithWorkflowRow>`
    ${preparedSql}
    with locked as materialized (${locked})
    select ${taskColumns}, ${workflowColumns}, (select causeway_now()) as db_now
    from causeway_tasks as t
    join causeway_workflows as w on w.id = t.workflow_id
    -- An array, not a semi-join: probes of the (workflow_id, step) index, never a hash of
    -- the whole table whenever it is small enough to look cheap.
    where t.workflow_id = any(array(select id from locked))
      -- On w too: otherwise the planner hashes the whole workflows table to join it.
      and w.id = any(array(select id from locked))
    order by t.id
    for update of t, w`.execute(tx);
  return loadedFromRows(rows, rows[0]?.db_now ?? (await databaseNow(tx)));
}
