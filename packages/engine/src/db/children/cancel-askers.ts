import { taskEdges } from '@causeway/workflow/internal';
import { sql, type Transaction } from 'kysely';
import { arrayLiteral } from '../array-literal';
import type { CausewayDatabase } from '../schema';

/**
 * The reasons of the edges that ask a task to cancel, read off the edge table: a parent step
 * writes no other edge of its children than their creation and these asks (R43, R45, R46),
 * and its asks take the same edges as a client's or an operator's.
 */
const cancelAskReasonsSql = sql.join(
  [
    ...new Set(
      taskEdges
        .filter(
          (rule) => rule.from !== null && (rule.actors as readonly string[]).includes('parent'),
        )
        .flatMap((rule) => rule.reasons),
    ),
  ].map((reason) => sql.lit(reason)),
);

/** An awaited child workflow (not detached, not replaced), and who last asked it to cancel. */
export interface CancelAsker {
  readonly id: string;
  readonly name: string;
  readonly parentTaskId: string;
  readonly index: number;
  /** The actor of the latest edge that asked one of its tasks to cancel; null if none did. */
  readonly askedBy: string | null;
}

/**
 * Who asked each of these child workflows to cancel last, from their logs (the only record of
 * it once the ask is confirmed): the awaited ones only, the others are left out. The caller
 * holds the children's locks, so no ask can come meanwhile.
 */
export async function cancelAskersRead(
  tx: Transaction<CausewayDatabase>,
  workflowIds: readonly string[],
): Promise<CancelAsker[]> {
  if (workflowIds.length === 0) return [];
  const { rows } = await sql<{
    id: string;
    name: string;
    parent_task_id: string;
    child_index: number;
    asked_by: string | null;
  }>`
    select w.id, w.name, w.parent_task_id, w.child_index,
      (select l.actor from causeway_transitions as l
        where l.workflow_id = w.id and l.task_id is not null
          and l.reason in (${cancelAskReasonsSql})
        order by l.id desc limit 1) as asked_by
    from causeway_workflows as w
    where w.id = any(${arrayLiteral(workflowIds)}::uuid[])
      and w.parent_task_id is not null and not w.detached and not w.replaced
    order by w.parent_task_id, w.child_index`.execute(tx);
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    parentTaskId: row.parent_task_id,
    index: row.child_index,
    askedBy: row.asked_by,
  }));
}
