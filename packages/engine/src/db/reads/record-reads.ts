import type { Selectable } from 'kysely';
import type { Db } from '../database';
import {
  type TaskRecord,
  taskFromRow,
  transitionFromRow,
  type WorkflowRecord,
  workflowFromRow,
} from '../rows';
import type { TaskTable } from '../schema';

/** Which workflow each task belongs to (immutable, so no lock is needed). */
export async function taskWorkflowIds(
  db: Db,
  taskIds: readonly string[],
): Promise<Map<string, string>> {
  if (taskIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('causeway_tasks')
    .select(['id', 'workflow_id'])
    .where('id', 'in', [...taskIds])
    .execute();
  return new Map(rows.map((row) => [row.id, row.workflow_id]));
}

/** All tasks of these workflows, unlocked (reads; deciders use `workflowLockWithTasks`). */
export async function taskListByWorkflows(
  db: Db,
  workflowIds: readonly string[],
): Promise<TaskRecord[]> {
  if (workflowIds.length === 0) return [];
  const rows = await db
    .selectFrom('causeway_tasks')
    .selectAll()
    .where('workflow_id', 'in', [...workflowIds])
    .orderBy('id')
    .execute();
  return rows.map(taskFromRow);
}

export async function workflowGet(db: Db, id: string): Promise<WorkflowRecord | undefined> {
  const row = await db
    .selectFrom('causeway_workflows')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : workflowFromRow(row);
}

export async function taskGet(db: Db, id: string): Promise<TaskRecord | undefined> {
  const row = await db
    .selectFrom('causeway_tasks')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : taskFromRow(row as Selectable<TaskTable>);
}

export async function transitionListByWorkflow(db: Db, workflowId: string) {
  const rows = await db
    .selectFrom('causeway_transitions')
    .selectAll()
    .where('workflow_id', '=', workflowId)
    .orderBy('id')
    .execute();
  return rows.map(transitionFromRow);
}
