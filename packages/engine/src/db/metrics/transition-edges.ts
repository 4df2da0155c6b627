import { sql } from 'kysely';
import type { Db } from '../database';

/** A log row as the metrics count it: which edge, and how long its `from` state lasted. */
export interface TransitionEdge {
  readonly id: string;
  /** Task rows have a task id; workflow rows (the parent's changes) have none. */
  readonly kind: 'task' | 'workflow';
  readonly from: string | null;
  readonly to: string;
  readonly reason: string;
  /**
   * Seconds from the row that entered `from` (the previous row of the same task, or of the
   * workflow's own rows) to this one; null for a row without `from` or whose previous row is
   * missing.
   */
  readonly secondsInState: number | null;
}

/**
 * Log rows with `after < id <= upTo` in id order, at most `limit`, each with the time its task
 * (or workflow) spent in the state the row leaves. The range is a primary-key range scan; the
 * previous row is one backward probe of the (workflow_id, id) index per row, among the few rows
 * of its workflow. Per task, id order is edge order: every edge writes the task row, so the
 * next edge's statement waits for the previous one to commit before it takes its id.
 */
export async function transitionEdgesRange(
  db: Db,
  range: { readonly after: bigint; readonly upTo: bigint; readonly limit: number },
): Promise<TransitionEdge[]> {
  if (range.upTo <= range.after) return [];
  const { rows } = await sql<{
    id: string;
    is_task: boolean;
    from_state: string | null;
    to_state: string;
    reason: string;
    seconds_in_state: number | null;
  }>`
    select t.id::text as id, t.task_id is not null as is_task, t.from_state, t.to_state,
           t.reason, extract(epoch from t.at - entered.at)::float8 as seconds_in_state
      from causeway_transitions as t
      left join lateral (
        select p.at
          from causeway_transitions as p
         where t.from_state is not null
           and p.workflow_id = t.workflow_id and p.id < t.id
           and p.task_id is not distinct from t.task_id
         order by p.id desc
         limit 1
      ) as entered on true
     where t.id > ${range.after.toString()}::bigint and t.id <= ${range.upTo.toString()}::bigint
     order by t.id
     limit ${range.limit}`.execute(db);
  return rows.map((row) => ({
    id: row.id,
    kind: row.is_task ? 'task' : 'workflow',
    from: row.from_state,
    to: row.to_state,
    reason: row.reason,
    secondsInState: row.seconds_in_state === null ? null : Math.max(0, row.seconds_in_state),
  }));
}
