import { sql, type Transaction } from 'kysely';
import { arrayLiteral } from '../array-literal';
import type { CausewayDatabase } from '../schema';
import { failedStatesSql, succeededStateSql, terminalStatesSql } from '../task-states';

/** A step's awaited child, as the parent's decisions need it. */
export interface AwaitedChild {
  readonly id: string;
  readonly name: string;
  /** The version it records (R54); null if stored before versions. */
  readonly version: string | null;
  readonly state: string;
  readonly parentTaskId: string;
  readonly index: number;
}

/**
 * The awaited children of steps (not detached, not replaced), in input order; with
 * `unfinished`, only those not yet terminal. Unlocked: the parent columns never change, and the
 * caller locks the workflows it then decides for.
 */
export async function childrenOfSteps(
  tx: Transaction<CausewayDatabase>,
  taskIds: readonly string[],
  options: { readonly unfinished: boolean },
): Promise<AwaitedChild[]> {
  if (taskIds.length === 0) return [];
  const { rows } = await sql<{
    id: string;
    name: string;
    version: string | null;
    state: string;
    parent_task_id: string;
    child_index: number;
  }>`
    select w.id, w.name, w.version, w.state, w.parent_task_id, w.child_index
    from causeway_workflows as w
    where w.parent_task_id = any(${arrayLiteral(taskIds)}::uuid[])
      and not w.detached and not w.replaced
      ${options.unfinished ? sql`and w.state not in (${terminalStatesSql})` : sql``}
    order by w.parent_task_id, w.child_index`.execute(tx);
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    version: row.version,
    state: row.state,
    parentTaskId: row.parent_task_id,
    index: row.child_index,
  }));
}

/** Marks children that a replay of their parent step started again (R47): no longer counted. */
export async function childrenReplacedWrite(
  tx: Transaction<CausewayDatabase>,
  workflowIds: readonly string[],
): Promise<void> {
  if (workflowIds.length === 0) return;
  await sql`update causeway_workflows set replaced = true
    where id = any(${arrayLiteral(workflowIds)}::uuid[])`.execute(tx);
}

/** Steps' awaited children counted by outcome (R45), for a tally a replay starts anew. */
export async function childTallyCount(
  tx: Transaction<CausewayDatabase>,
  taskIds: readonly string[],
): Promise<Map<string, { total: number; succeeded: number; failed: number }>> {
  if (taskIds.length === 0) return new Map();
  const { rows } = await sql<{
    parent_task_id: string;
    total: number;
    succeeded: number;
    failed: number;
  }>`
    select w.parent_task_id, count(*)::integer as total,
      (count(*) filter (where w.state = ${succeededStateSql}))::integer as succeeded,
      (count(*) filter (where w.state in (${failedStatesSql})))::integer as failed
    from causeway_workflows as w
    where w.parent_task_id = any(${arrayLiteral(taskIds)}::uuid[])
      and not w.detached and not w.replaced
    group by w.parent_task_id`.execute(tx);
  return new Map(
    rows.map((row) => [
      row.parent_task_id,
      { total: row.total, succeeded: row.succeeded, failed: row.failed },
    ]),
  );
}
