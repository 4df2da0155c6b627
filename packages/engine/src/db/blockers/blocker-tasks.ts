import type { Transition } from '@causeway/workflow';
import { type Selectable, sql } from 'kysely';
import type { Db } from '../database';
import { onlyUuids } from '../reads/read-queries';
import { type TaskRecord, taskFromRow, transitionFromRow } from '../rows';
import type { TaskTable, TransitionTable } from '../schema';
import { terminalStatesSql } from '../task-states';

/** A workflow as its blockers need it: its name and the steps it was submitted with. */
export interface BlockerWorkflow {
  readonly id: string;
  readonly name: string;
  /** The version it records (R54); null if stored before versions. */
  readonly version: string | null;
  /** In definition order; empty for a row not written by a submit. */
  readonly steps: readonly string[];
}

/** A task with the edge that put it in its state (read only for non-terminal tasks). */
export interface TaskWithLastEdge {
  readonly task: TaskRecord;
  readonly lastEdge: Transition | null;
}

export interface BlockerTaskRead {
  readonly workflows: ReadonlyMap<string, BlockerWorkflow>;
  readonly tasks: readonly TaskWithLastEdge[];
  /** Database time of the read (R11); null when no workflow was found. */
  readonly now: Date | null;
}

/** The latest edge's columns, prefixed: all null when the task has none (or is terminal). */
type EdgeColumns = {
  [Key in keyof Selectable<TransitionTable> as `e_${Key & string}`]:
    | Selectable<TransitionTable>[Key]
    | null;
};

/**
 * The workflows `ids` with their tasks, and each non-terminal task's latest edge, in one
 * statement: the workflows by primary key, their tasks by the (workflow_id, step) index, and
 * each latest edge through the log's (workflow_id, id) index, which holds only the rows of
 * that workflow. Unknown ids are simply absent.
 */
export async function blockerTaskRead(db: Db, ids: readonly string[]): Promise<BlockerTaskRead> {
  const wanted = onlyUuids(ids);
  const { rows } = await sql<
    Partial<Selectable<TaskTable>> &
      EdgeColumns & {
        w_id: string;
        w_name: string;
        w_version: string | null;
        w_steps: string | null;
        read_now: Date;
      }
  >`
    select w.id as w_id, w.name as w_name, w.version as w_version, w.steps as w_steps,
      causeway_now() as read_now,
      t.*, e.id as e_id, e.workflow_id as e_workflow_id, e.task_id as e_task_id,
      e.step as e_step, e.from_state as e_from_state, e.to_state as e_to_state,
      e.reason as e_reason, e.error_category as e_error_category,
      e.error_summary as e_error_summary, e.actor as e_actor, e.attempt as e_attempt,
      e.at as e_at, e.detail as e_detail
    from causeway_workflows as w
    left join causeway_tasks as t on t.workflow_id = w.id
    left join lateral (
      select * from causeway_transitions as r
      where r.workflow_id = t.workflow_id and r.task_id = t.id
        and t.state not in (${terminalStatesSql})
      order by r.id desc
      limit 1
    ) as e on true
    where w.id = any(${wanted}::uuid[])`.execute(db);
  const workflows = new Map<string, BlockerWorkflow>();
  const tasks: TaskWithLastEdge[] = [];
  let now: Date | null = null;
  for (const row of rows) {
    now = row.read_now;
    const steps = row.w_steps === null || row.w_steps === '' ? [] : row.w_steps.split(',');
    workflows.set(row.w_id, { id: row.w_id, name: row.w_name, version: row.w_version, steps });
    if (row.id === null || row.id === undefined) continue;
    tasks.push({
      task: taskFromRow(row as Selectable<TaskTable>),
      lastEdge: row.e_id === null ? null : transitionFromRow(edgeOf(row)),
    });
  }
  return { workflows, tasks, now };
}

function edgeOf(row: EdgeColumns): Selectable<TransitionTable> {
  return {
    id: row.e_id,
    workflow_id: row.e_workflow_id,
    task_id: row.e_task_id,
    step: row.e_step,
    from_state: row.e_from_state,
    to_state: row.e_to_state,
    reason: row.e_reason,
    error_category: row.e_error_category,
    error_summary: row.e_error_summary,
    actor: row.e_actor,
    attempt: row.e_attempt,
    at: row.e_at,
    detail: row.e_detail,
  } as Selectable<TransitionTable>;
}
