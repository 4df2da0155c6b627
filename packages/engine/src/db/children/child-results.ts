import { sql, type Transaction } from 'kysely';
import type { CausewayDatabase } from '../schema';
import { succeededStateSql } from '../task-states';

/** One awaited child of a step with its steps' outputs and how it ended (R45). */
export interface ChildResultRow {
  readonly id: string;
  readonly name: string;
  /** The version it records (R54); null if stored before versions. */
  readonly version: string | null;
  readonly state: string;
  readonly index: number;
  /** Each step's stored output, by step name. */
  readonly outputs: Readonly<Record<string, unknown>>;
  /** The reason of the edge that ended a child that did not succeed. */
  readonly reason: string | null;
}

/**
 * A step's awaited children in input order with their outputs, for its output when they
 * settle it: one statement through the parent-task index and each child's tasks.
 */
export async function childResultsRead(
  tx: Transaction<CausewayDatabase>,
  parentTaskId: string,
): Promise<ChildResultRow[]> {
  const { rows } = await sql<{
    id: string;
    name: string;
    version: string | null;
    state: string;
    child_index: number;
    outputs: Record<string, unknown> | null;
    reason: string | null;
  }>`
    select w.id, w.name, w.version, w.state, w.child_index,
      (select jsonb_object_agg(t.step, t.output) from causeway_tasks as t
        where t.workflow_id = w.id) as outputs,
      case when w.state <> ${succeededStateSql} then (
        select l.reason from causeway_transitions as l
        where l.workflow_id = w.id and l.task_id is null
        order by l.id desc limit 1) end as reason
    from causeway_workflows as w
    where w.parent_task_id = ${parentTaskId}::uuid and not w.detached and not w.replaced
    order by w.child_index`.execute(tx);
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    version: row.version,
    state: row.state,
    index: row.child_index,
    outputs: row.outputs ?? {},
    reason: row.reason,
  }));
}
