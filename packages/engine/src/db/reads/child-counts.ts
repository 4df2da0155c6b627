import {
  isTerminalWorkflowState,
  type StepChildrenCounts,
  type WorkflowState,
  workflowStates,
} from '@causeway/workflow/internal';
import { type Selectable, sql } from 'kysely';
import type { Db } from '../database';
import { type ChildTallyRecord, type TaskRecord, taskFromRow } from '../rows';
import type { TaskTable } from '../schema';
import { onlyUuids } from './read-queries';

/** A step's child workflows, counted (R48): its tally and its children by state. */
export interface StepChildCounts extends StepChildrenCounts {
  readonly workflowId: string;
  readonly taskId: string;
  readonly taskState: TaskRecord['state'];
  /** Children that succeeded: the tally's count, or the children's own for detached ones. */
  readonly succeeded: number;
  /** Children not terminal yet. */
  readonly unfinished: number;
  readonly byState: Readonly<Record<WorkflowState, number>>;
  /** Children started with `{ detached: true }`: not awaited, not in the tally (R46). */
  readonly detached: number;
  /** The step's tally as its row keeps it; null for a step whose children are all detached. */
  readonly tally: ChildTallyRecord | null;
}

/**
 * Every step of the workflows `ids` that started children, in one statement: each task by the
 * (workflow_id, step) index with its tally columns, and its children grouped by name and state
 * through the (parent_task_id, child_index) index. The tally and the children are read in one
 * snapshot, and a child's edge updates its parent's tally in its own transaction, so the two
 * agree. Children a replay replaced (R47) are not counted.
 */
export async function childCountList(db: Db, ids: readonly string[]): Promise<StepChildCounts[]> {
  const wanted = onlyUuids(ids);
  if (wanted.length === 0) return [];
  const { rows } = await sql<
    Selectable<TaskTable> & {
      child_name: string | null;
      child_state: string | null;
      child_detached: boolean | null;
      child_count: number | null;
    }
  >`
    select t.*, c.name as child_name, c.state as child_state, c.detached as child_detached,
           c.count as child_count
    from causeway_tasks as t
    left join lateral (
      select name, state, detached, count(*)::int as count from causeway_workflows
      where parent_task_id = t.id and not replaced
      group by name, state, detached
    ) as c on true
    where t.workflow_id = any(${wanted}::uuid[])
      and (t.children_total is not null or c.count is not null)
    order by t.workflow_id, t.step, c.name`.execute(db);
  const steps = new Map<
    string,
    { task: TaskRecord; names: Set<string>; byState: Record<WorkflowState, number> }
  >();
  const detachedBy = new Map<string, number>();
  for (const row of rows) {
    let entry = steps.get(row.id);
    if (entry === undefined) {
      const byState = Object.fromEntries(workflowStates.map((state) => [state, 0]));
      const task = taskFromRow(row);
      entry = { task, names: new Set(), byState: byState as Record<WorkflowState, number> };
      steps.set(row.id, entry);
    }
    if (row.child_name === null || row.child_state === null || row.child_count === null) continue;
    entry.names.add(row.child_name);
    entry.byState[row.child_state as WorkflowState] += row.child_count;
    if (row.child_detached === true) {
      detachedBy.set(row.id, (detachedBy.get(row.id) ?? 0) + row.child_count);
    }
  }
  return [...steps.values()].map(({ task, names, byState }) => {
    const counted = Object.values(byState).reduce((sum, count) => sum + count, 0);
    const tally = task.children;
    return {
      workflowId: task.workflowId,
      taskId: task.id,
      step: task.step,
      taskState: task.state,
      workflows: [...names],
      total: tally?.total ?? counted,
      succeeded: tally?.succeeded ?? byState.succeeded,
      failed: tally?.failed ?? byState.dead + byState.cancelled,
      allowedFailures: tally?.allowedFailures ?? 0,
      unfinished: workflowStates
        .filter((state) => !isTerminalWorkflowState(state))
        .reduce((sum, state) => sum + byState[state], 0),
      byState,
      detached: detachedBy.get(task.id) ?? 0,
      tally,
    };
  });
}
