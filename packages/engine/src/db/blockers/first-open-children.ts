import { terminalWorkflowStates } from '@causeway/workflow/internal';
import { sql } from 'kysely';
import type { Db } from '../database';

/** The child a parent step's blocker follows down the tree (R48). */
export interface OpenChild {
  readonly taskId: string;
  readonly workflowId: string;
  readonly name: string;
  readonly state: string;
}

const terminalSql = sql.join(terminalWorkflowStates.map((state) => sql.lit(state)));

/**
 * For each parent task of `taskIds`, its first unfinished awaited child in input order (the
 * oldest: a step starts its children in that order), one statement for any number of tasks:
 * each task's children through the (parent_task_id, child_index) index, stopping at the first
 * one that is not terminal. Detached children (not awaited) and children a replay replaced are
 * skipped. Tasks with no such child are absent.
 */
export async function firstOpenChildList(
  db: Db,
  taskIds: readonly string[],
): Promise<Map<string, OpenChild>> {
  if (taskIds.length === 0) return new Map();
  const { rows } = await sql<{ task_id: string; id: string; name: string; state: string }>`
    select p.task_id, c.id, c.name, c.state
    from unnest(${[...new Set(taskIds)]}::uuid[]) as p(task_id)
    cross join lateral (
      select id, name, state from causeway_workflows
      where parent_task_id = p.task_id and not detached and not replaced
        and state not in (${terminalSql})
      order by child_index
      limit 1
    ) as c`.execute(db);
  return new Map(
    rows.map((row) => [
      row.task_id,
      { taskId: row.task_id, workflowId: row.id, name: row.name, state: row.state },
    ]),
  );
}
