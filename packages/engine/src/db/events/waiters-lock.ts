import { sql, type Transaction } from 'kysely';
import type { LoadedRuns } from '../locked-runs';
import type { CausewayDatabase } from '../schema';
import { lockedRunsRead } from '../settle/workflow-lock';
import { waitingStateSql } from '../task-states';

/**
 * Locks the workflows of the tasks waiting for these (name, key) pairs, and those named in
 * `workflowIds`, in id order, with all their task rows, in one round trip (`lockedRunsRead`).
 */
export function waitersLock(
  tx: Transaction<CausewayDatabase>,
  pairs: readonly { readonly name: string; readonly key: string }[],
  workflowIds: readonly string[],
): Promise<LoadedRuns> {
  return lockedRunsRead(
    tx,
    sql`select id from causeway_workflows
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
      for update`,
  );
}
