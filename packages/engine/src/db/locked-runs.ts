import { type Selectable, sql } from 'kysely';
import {
  type leasedTaskFromRow,
  type TaskRecord,
  taskFromRow,
  type WorkflowRecord,
  workflowFromRow,
} from './rows';
import type { TaskTable } from './schema';

/** Locked workflows with all their (locked) tasks, and the database time of the lock. */
export interface LoadedRuns {
  readonly workflows: readonly WorkflowRecord[];
  readonly tasks: readonly TaskRecord[];
  readonly now: Date;
}

export type TaskWithWorkflowRow = Selectable<TaskTable> & {
  readonly w_name: string;
  readonly w_state: string;
  readonly w_input: unknown;
  readonly w_idempotency_key: string | null;
  readonly w_created_at: Date;
  readonly w_updated_at: Date;
  readonly w_parent_workflow_id: string | null;
  readonly w_parent_task_id: string | null;
  readonly w_child_index: number | null;
  readonly w_root_workflow_id: string | null;
  readonly w_depth: number;
  readonly w_detached: boolean;
  readonly w_attributes?: unknown;
  readonly w_version: string | null;
  readonly db_now: Date;
};

/** Splits joined task + workflow rows into records (workflows de-duplicated, in row order). */
export function loadedFromRows(rows: readonly TaskWithWorkflowRow[], now: Date): LoadedRuns {
  const workflows = new Map<string, WorkflowRecord>();
  for (const row of rows) {
    if (workflows.has(row.workflow_id)) continue;
    workflows.set(
      row.workflow_id,
      workflowFromRow({
        id: row.workflow_id,
        name: row.w_name,
        state: row.w_state,
        input: row.w_input,
        idempotency_key: row.w_idempotency_key,
        created_at: row.w_created_at,
        updated_at: row.w_updated_at,
        parent_workflow_id: row.w_parent_workflow_id,
        parent_task_id: row.w_parent_task_id,
        child_index: row.w_child_index,
        root_workflow_id: row.w_root_workflow_id,
        depth: row.w_depth,
        detached: row.w_detached,
        attributes: row.w_attributes,
        version: row.w_version,
      }),
    );
  }
  return { workflows: [...workflows.values()], tasks: rows.map(taskFromRow), now };
}

/**
 * Task columns by name: a prepared statement with `t.*` would fail ("cached plan must not
 * change result type") on connections that prepared it before a migration added a column.
 */
export const taskColumns = sql`t.id, t.workflow_id, t.step, t.queue, t.state, t.attempt, t.max_attempts,
  t.replay_count, t.priority, t.run_at, t.deadline_at, t.lease_holder, t.lease_epoch, t.lease_expires_at,
  t.effect_started, t.evidence, t.checkpoints, t.progress, t.output, t.receipt_id,
  t.receipt_deadline_at, t.last_error_category, t.last_error, t.cancel_asked_at,
  t.cancel_asked_by, t.event_name, t.event_key, t.wait_since, t.wait_timeout_at,
  t.children_total, t.children_succeeded, t.children_failed, t.children_allowed_failures,
  t.children_output, t.concurrency_group, t.concurrency_key, t.concurrency_limit, t.rate_name,
  t.rate_key, t.rate_cost, t.created_at, t.updated_at`;

/** The task columns an attempt reads (`LeasedTask`). */
export const leasedTaskColumns = sql`t.id, t.workflow_id, t.step, t.queue, t.state, t.attempt,
  t.lease_epoch, t.deadline_at, t.evidence, t.checkpoints`;

export type LeasedTaskRow = Parameters<typeof leasedTaskFromRow>[0];

export const workflowColumns = sql`w.name as w_name, w.state as w_state, w.input as w_input,
  w.idempotency_key as w_idempotency_key, w.created_at as w_created_at,
  w.updated_at as w_updated_at, w.parent_workflow_id as w_parent_workflow_id,
  w.parent_task_id as w_parent_task_id, w.child_index as w_child_index,
  w.root_workflow_id as w_root_workflow_id, w.depth as w_depth, w.detached as w_detached,
  w.attributes as w_attributes, w.version as w_version`;
