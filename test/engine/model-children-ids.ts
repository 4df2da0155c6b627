/**
 * The child workflows the engine started for a run of the engine model test (R43), found with
 * plain SQL after each command: their ids, which the model takes as it follows the same
 * starts (the engine chooses ids; the model chooses nothing else), and their links as their
 * rows hold them (R43, R47).
 */
import { type QueryExecutorProvider, sql } from 'kysely';
import type { ChildIds } from './model-children-host';

/** A child found and not yet taken by the model, with its place under its step. */
interface Found extends ChildIds {
  readonly parentTaskId: string;
  readonly index: number;
}

export class ChildFinder {
  private readonly untakenChildren: Found[] = [];

  /**
   * The children of `workflowIds`' steps started since the last look, in the order they were
   * written: they join `workflowIds`, so their rows are the run's too.
   */
  async find(db: QueryExecutorProvider, workflowIds: Set<string>): Promise<void> {
    if (workflowIds.size === 0) return;
    const known = [...workflowIds];
    const { rows } = await sql<{
      id: string;
      parent_task_id: string;
      child_index: number;
      task_ids: string[];
    }>`
      select w.id, w.parent_task_id, w.child_index,
        array(select t.id from causeway_tasks as t where t.workflow_id = w.id order by t.step)
          as task_ids
      from causeway_workflows as w
      where w.parent_workflow_id = any(${known}::uuid[]) and not (w.id = any(${known}::uuid[]))
      order by w.created_at, w.child_index`.execute(db);
    for (const row of rows) {
      workflowIds.add(row.id);
      this.untakenChildren.push({
        workflowId: row.id,
        taskIds: row.task_ids,
        parentTaskId: row.parent_task_id,
        index: row.child_index,
      });
    }
  }

  /** The child the engine started at a step's index, for the model's start of it. */
  take(parentTaskId: string, index: number): ChildIds {
    const at = this.untakenChildren.findIndex(
      (child) => child.parentTaskId === parentTaskId && child.index === index,
    );
    const [found] = at === -1 ? [] : this.untakenChildren.splice(at, 1);
    if (found === undefined)
      throw new Error(`no child ${index} of task ${parentTaskId} was written`);
    return { workflowId: found.workflowId, taskIds: found.taskIds };
  }

  /** Children written that the model never took: it missed a start. */
  untaken(): number {
    return this.untakenChildren.length;
  }

  /** The parent links of the run's child workflows (R43, R47). */
  async links(
    db: QueryExecutorProvider,
    workflowIds: ReadonlySet<string>,
  ): Promise<Record<string, unknown>[]> {
    const { rows } = await sql<Record<string, unknown>>`
      select id, parent_workflow_id, parent_task_id, child_index, replaced
      from causeway_workflows
      where id = any(${[...workflowIds]}::uuid[]) and parent_workflow_id is not null
      order by id`.execute(db);
    return rows;
  }
}
