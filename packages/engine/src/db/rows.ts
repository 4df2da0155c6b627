import type {
  ErrorCategory,
  ReasonCode,
  TaskConcurrency,
  TaskRate,
  TaskSnapshot,
  TaskState,
  Transition,
  WorkflowAttributes,
  WorkflowState,
} from '@causeway/workflow/internal';
import type { Selectable } from 'kysely';
import type { TaskTable, TransitionTable, WorkflowTable } from './schema';

/** A task as stored, in TypeScript's words. The only place snake_case becomes camelCase. */
export interface TaskRecord {
  readonly id: string;
  readonly workflowId: string;
  readonly step: string;
  readonly queue: string;
  /** Its concurrency slot (R50), where the read selected it; null or absent: none. */
  readonly concurrency?: TaskConcurrency | null;
  /** What its claims spend of a rate limit (R51), where the read selected it; key null: the name's one bucket. */
  readonly rate?: TaskRate | null;
  readonly state: TaskState;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly replayCount: number;
  /** Seconds of backlog it may jump in its queue (R49): claims order by `run_at − priority`. */
  readonly priority: number;
  readonly runAt: Date | null;
  readonly deadlineAt: Date | null;
  readonly leaseHolder: string | null;
  readonly leaseEpoch: number;
  readonly leaseExpiresAt: Date | null;
  readonly effectStarted: boolean;
  /** External acceptance id of the effect (R21), if recorded. */
  readonly evidence: string | null;
  readonly checkpoints: Readonly<Record<string, unknown>>;
  readonly progress: unknown;
  readonly output: unknown;
  readonly receiptId: string | null;
  readonly receiptDeadlineAt: Date | null;
  readonly lastErrorCategory: ErrorCategory | null;
  readonly lastError: string | null;
  /** A cancel asked after the submission was accepted (R14): recorded, not an edge. */
  readonly cancelAskedAt: Date | null;
  readonly cancelAskedBy: string | null;
  /** The event an event step waits for, and since when and until when (R37, R39). */
  readonly eventName: string | null;
  readonly eventKey: string | null;
  readonly waitSince: Date | null;
  readonly waitTimeoutAt: Date | null;
  /** A step that started child workflows: their tally and what its output lists (R43–R45). */
  readonly children: ChildTallyRecord | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A step's children as its row counts them. */
export interface ChildTallyRecord {
  readonly total: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly allowedFailures: number;
  readonly output: 'result' | 'outcome' | 'single';
}

/** A child workflow's place in its tree (R43); null on a root. Never changes after admission. */
export interface ParentLink {
  readonly workflowId: string;
  readonly taskId: string;
  readonly index: number;
  readonly rootId: string;
  readonly depth: number;
  readonly detached: boolean;
}

/** A task as a claim hands it to its attempt: what an attempt reads, and no more. */
export type LeasedTask = Pick<
  TaskRecord,
  | 'id'
  | 'workflowId'
  | 'step'
  | 'queue'
  | 'state'
  | 'attempt'
  | 'leaseEpoch'
  | 'deadlineAt'
  | 'evidence'
  | 'checkpoints'
>;

export function leasedTaskFromRow(
  row: Pick<
    Selectable<TaskTable>,
    | 'id'
    | 'workflow_id'
    | 'step'
    | 'queue'
    | 'state'
    | 'attempt'
    | 'lease_epoch'
    | 'deadline_at'
    | 'evidence'
    | 'checkpoints'
  >,
): LeasedTask {
  return {
    id: row.id,
    workflowId: row.workflow_id,
    step: row.step,
    queue: row.queue,
    state: row.state as TaskState,
    attempt: row.attempt,
    leaseEpoch: Number(row.lease_epoch),
    deadlineAt: row.deadline_at,
    evidence: row.evidence,
    checkpoints: row.checkpoints ?? {},
  };
}

export interface WorkflowRecord {
  readonly id: string;
  readonly name: string;
  /** The definition's version it was accepted under (R54); null if stored before versions. */
  readonly version: string | null;
  readonly state: WorkflowState;
  readonly input: unknown;
  readonly idempotencyKey: string | null;
  /** Its parent, when a step started it (R43); null for a root. */
  readonly parent: ParentLink | null;
  /** Its searchable attributes (R55), fixed at admission; `{}` when it has none. */
  readonly attributes: WorkflowAttributes;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A whole task row: the columns an attempt reads (`leasedTaskFromRow`) and the rest. */
export function taskFromRow(row: Selectable<TaskTable>): TaskRecord {
  return {
    ...leasedTaskFromRow(row),
    concurrency:
      row.concurrency_key === null || row.concurrency_key === undefined
        ? null
        : {
            group: row.concurrency_group as string,
            key: row.concurrency_key,
            limit: row.concurrency_limit as number,
          },
    rate:
      row.rate_name === null || row.rate_name === undefined
        ? null
        : {
            name: row.rate_name,
            key: row.rate_key === '' ? null : (row.rate_key as string),
            cost: row.rate_cost as number,
          },
    maxAttempts: row.max_attempts,
    replayCount: row.replay_count,
    priority: row.priority,
    runAt: row.run_at,
    leaseHolder: row.lease_holder,
    leaseExpiresAt: row.lease_expires_at,
    effectStarted: row.effect_started,
    progress: row.progress,
    output: row.output,
    receiptId: row.receipt_id,
    receiptDeadlineAt: row.receipt_deadline_at,
    lastErrorCategory: row.last_error_category as ErrorCategory | null,
    lastError: row.last_error,
    cancelAskedAt: row.cancel_asked_at,
    cancelAskedBy: row.cancel_asked_by,
    eventName: row.event_name,
    eventKey: row.event_key,
    waitSince: row.wait_since,
    waitTimeoutAt: row.wait_timeout_at,
    children:
      row.children_total === null || row.children_total === undefined
        ? null
        : {
            total: row.children_total,
            succeeded: row.children_succeeded ?? 0,
            failed: row.children_failed ?? 0,
            allowedFailures: row.children_allowed_failures ?? 0,
            output: row.children_output ?? 'result',
          },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export type WorkflowRow = Omit<
  Selectable<WorkflowTable>,
  | 'steps'
  | 'version'
  | 'rare_state'
  | 'parent_workflow_id'
  | 'parent_task_id'
  | 'child_index'
  | 'root_workflow_id'
  | 'depth'
  | 'detached'
  | 'replaced'
  | 'debounce_key'
  | 'debounce_burst_started_at'
  | 'debounce_quiet_ms'
  | 'debounce_max_wait_ms'
  | 'trace_context'
  | 'attributes'
> &
  Partial<
    Pick<
      Selectable<WorkflowTable>,
      | 'attributes'
      | 'parent_workflow_id'
      | 'parent_task_id'
      | 'child_index'
      | 'root_workflow_id'
      | 'depth'
      | 'detached'
      | 'version'
    >
  >;

export function workflowFromRow(row: WorkflowRow): WorkflowRecord {
  return {
    id: row.id,
    name: row.name,
    version: row.version ?? null,
    state: row.state as WorkflowState,
    input: row.input,
    idempotencyKey: row.idempotency_key,
    parent:
      row.parent_task_id === null || row.parent_task_id === undefined
        ? null
        : {
            workflowId: row.parent_workflow_id as string,
            taskId: row.parent_task_id,
            index: row.child_index as number,
            rootId: row.root_workflow_id as string,
            depth: row.depth ?? 1,
            detached: row.detached ?? false,
          },
    attributes: attributesFromColumn(row.attributes),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const noAttributes: WorkflowAttributes = Object.freeze({});

/** The jsonb column's attributes in key order (jsonb keeps shorter keys first); `{}` for null. */
function attributesFromColumn(column: unknown): WorkflowAttributes {
  if (column === null || column === undefined) return noAttributes;
  const entries = Object.entries(column as WorkflowAttributes);
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function transitionFromRow(row: Selectable<TransitionTable>): Transition {
  return {
    id: String(row.id),
    workflowId: row.workflow_id,
    taskId: row.task_id,
    step: row.step,
    from: row.from_state as Transition['from'],
    to: row.to_state as Transition['to'],
    reason: row.reason as ReasonCode,
    errorCategory: row.error_category as ErrorCategory | null,
    errorSummary: row.error_summary,
    actor: row.actor,
    attempt: row.attempt,
    at: row.at,
    detail: row.detail,
  };
}

/** The pure machine's view of a stored task. */
export function snapshotOf(task: TaskRecord): TaskSnapshot {
  return {
    state: task.state,
    attempt: task.attempt,
    effectStarted: task.effectStarted,
    evidence: task.evidence,
    replayCount: task.replayCount,
    runAt: task.runAt,
    deadlineAt: task.deadlineAt,
    lastErrorCategory: task.lastErrorCategory,
    lastError: task.lastError,
    waitTimeoutAt: task.waitTimeoutAt,
  };
}
