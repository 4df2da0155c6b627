import { sql, type Transaction } from 'kysely';
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
import { waitingStateSql } from '../task-states';

/**
 * Locks the workflows of the tasks waiting for these (name, key) pairs, and those named in
 * `workflowIds`, in id order, then all their task rows, and reads database time: one round
 * trip, as `workflowLockWithTasks` does for known ids (whose comment says why the main query
 * locks `w` again).
 */
export async function waitersLock(
  tx: Transaction<CausewayDatabase>,
  pairs: readonly { readonly name: string; readonly key: string }[],
  workflowIds: readonly string[],
): Promise<LoadedRuns> {
  const { rows } = await sql<TaskWithWorkflowRow>`
    ${preparedSql}
    with locked as materialized (
      select id from causeway_workflows
      where id in (
        select t.workflow_id
        from unnest(${pairs.map((pair) => pair.name)}::text[], ${pairs.map((pair) => pair.key)}::text[])
          as v(name, key)
        join causeway_tasks as t
          on t.state = ${waitingStateSql} and t.event_name = v.name and t.event_key = v.key
        union all
        select unnest(${[...workflowIds]}::uuid[])
      )
      order by id
      for update
    )
    select ${taskColumns}, ${workflowColumns}, (select causeway_now()) as db_now
    from causeway_tasks as t
    join causeway_workflows as w on w.id = t.workflow_id
    where t.workflow_id = any(array(select id from locked))
      -- On w too: otherwise the planner hashes the whole workflows table to join it.
      and w.id = any(array(select id from locked))
    order by t.id
    for update of t, w`.execute(tx);
  return loadedFromRows(rows, rows[0]?.db_now ?? (await databaseNow(tx)));
}
