import { sql } from 'kysely';
import { databaseNow } from '../clock';
import type { Db } from '../database';
import {
  type LoadedRuns,
  loadedFromRows,
  type TaskWithWorkflowRow,
  taskColumns,
  workflowColumns,
} from '../locked-runs';

/**
 * Tasks with their workflows, read without a lock, and database time: what is known of a step
 * before the transaction that decides it takes its locks (and checks again what it relies on).
 */
export async function stepsWithWorkflowsRead(
  db: Db,
  taskIds: readonly string[],
): Promise<LoadedRuns> {
  const { rows } = await sql<TaskWithWorkflowRow>`
    select ${taskColumns}, ${workflowColumns}, causeway_now() as db_now
    from causeway_tasks as t
    join causeway_workflows as w on w.id = t.workflow_id
    where t.id = any(${[...taskIds]}::uuid[])`.execute(db);
  return loadedFromRows(rows, rows[0]?.db_now ?? (await databaseNow(db)));
}
