/**
 * What the engine adds around each decision of the pure machine, written from the contract for
 * the engine model test (model-state.ts), in shapes of its own so it can disagree with the
 * engine's code:
 *   - the log row of an edge (R24), in causeway_transitions' own column names: `from_state`
 *     from the task's previous row (R25), `to_state` and `attempt` from the state the machine
 *     left, the actor text the caller passes (R24);
 *   - the parent's row (the aggregation table), naming the step, reason and actor of the edge that moved it;
 *   - the lease (R7), receipt (R23), wait (R37, R39) and output columns: a table keyed by
 *     (from, to);
 *   - the task row's columns by name, as read back with plain SQL.
 */
import type {
  RunTask,
  TaskEdge,
  TaskSnapshot,
  TaskState,
  WorkflowState,
} from '@causeway/workflow/internal';
import { leaseMs } from './model-workflows';

/** One row of causeway_transitions as the test compares it: every column but id and at. */
export interface LogRow {
  readonly workflow_id: string;
  readonly task_id: string | null;
  readonly step: string | null;
  readonly from_state: string | null;
  readonly to_state: string;
  readonly reason: string;
  readonly error_category: string | null;
  readonly error_summary: string | null;
  readonly actor: string;
  readonly attempt: number;
  readonly detail: unknown;
}

/** A claim (R7): who holds the task, until when. One value, so holder and expiry go together. */
export interface Lease {
  readonly holder: string;
  readonly expiresAt: Date;
}

/** The receipt a task waits for (R23), due by `deadlineAt`. */
export interface AwaitedReceipt {
  readonly id: string;
  readonly deadlineAt: Date;
}

/**
 * What a waiting task waits for (R37, R42: `waitingFor { name key since timeoutAt }`): its
 * event's name, its key (a function of the input and upstream results, computed when the wait
 * starts), since when, and when it gives up (R39: its timeout after it began).
 */
export interface ModelWait {
  readonly name: string;
  readonly key: string;
  readonly since: Date;
  readonly timeoutAt: Date;
}

/** The event a step that starts waiting waits for, and how long. */
export interface WaitStart {
  readonly name: string;
  readonly key: string;
  readonly timeoutMs: number;
}

/** What the engine keeps beside the machine's snapshot of a task. */
export interface EngineColumns {
  /** Null whenever no worker holds the task. */
  lease: Lease | null;
  /** Claims so far: R7's epoch grows by one on every claim and never goes back. */
  epoch: number;
  receipt: AwaitedReceipt | null;
  /** Set exactly while the task is `waiting`. */
  wait: ModelWait | null;
  /** The task's latest log row: its `to_state` is the state (R25), its reason what bulk requeue selects on. */
  last: LogRow;
  /** Checkpoint names ever written (R19: never cleared, a retry resumes from them). */
  readonly checkpoints: Set<string>;
  /** The step's output, stored with its completion and kept. */
  output: unknown;
}

/** What came with an event, for the columns its edge writes. */
export interface EventCause {
  /** The claiming worker's holder. */
  readonly holder?: string;
  /** The receipt an `await_receipt` waits for. */
  readonly receipt?: { readonly id: string; readonly timeoutMs: number };
  /** The output a `complete` reports, an event's payload (R37), a wait's `onTimeout` (R39). */
  readonly output?: unknown;
}

/**
 * The engine's own columns per edge of the edge table.
 *   lease   'claim' a new claim: holder = the claimer, epoch + 1, expiry = now + lease (R7);
 *           'held'  the claim goes on: the worker still runs until it confirms (R13);
 *           'none'  no worker holds the task (R23: awaiting a receipt releases the lease).
 *   receipt 'await' the receipt the step submitted, due by now + its timeout (R23);
 *           'none'  nothing awaited.
 *   output  'store' the completion's output is stored with the edge (R20, R37); otherwise kept.
 *   wait    'start' the wait begins now: its event and timeout (R37, R39); any other edge
 *           leaves no wait behind (only `waiting` has one).
 */
interface EdgeColumns {
  readonly lease: 'claim' | 'held' | 'none';
  readonly receipt: 'await' | 'none';
  readonly output?: 'store';
  readonly wait?: 'start';
}
const plain: EdgeColumns = { lease: 'none', receipt: 'none' };
const engineColumnsByEdge: Readonly<Record<string, EdgeColumns>> = {
  'pending → queued': plain,
  'pending → cancelled': plain,
  'queued → leased': { lease: 'claim', receipt: 'none' },
  'queued → cancelled': plain,
  'queued → dead': plain,
  'leased → succeeded': { ...plain, output: 'store' },
  'leased → queued': plain,
  'leased → dead': plain,
  'leased → awaiting_receipt': { lease: 'none', receipt: 'await' },
  'leased → cancel_requested': { lease: 'held', receipt: 'none' },
  'cancel_requested → cancelled': plain,
  'cancel_requested → succeeded': { ...plain, output: 'store' },
  'cancel_requested → awaiting_receipt': { lease: 'none', receipt: 'await' },
  'cancel_requested → dead': plain,
  'awaiting_receipt → succeeded': plain,
  'awaiting_receipt → queued': plain,
  'awaiting_receipt → dead': plain,
  'dead → queued': plain,
  'pending → waiting': { ...plain, wait: 'start' },
  'waiting → succeeded': { ...plain, output: 'store' },
  'waiting → dead': plain,
  'waiting → cancelled': plain,
  'dead → waiting': { ...plain, wait: 'start' },
  // R58: the step's key failed; no wait starts.
  'pending → dead': plain,
  // R43–R47: a step awaiting children holds no lease; settled, it stores its children's output.
  'leased → awaiting_children': plain,
  'pending → awaiting_children': plain,
  'awaiting_children → succeeded': { ...plain, output: 'store' },
  'awaiting_children → dead': plain,
  'awaiting_children → cancel_requested': plain,
  'dead → awaiting_children': plain,
};

/** The wait columns of a task row (R42's `waitingFor`), by column name. */
export function waitColumns(columns: EngineColumns): Record<string, unknown> {
  return {
    event_name: columns.wait?.name ?? null,
    event_key: columns.wait?.key ?? null,
    wait_since: columns.wait?.since ?? null,
    wait_timeout_at: columns.wait?.timeoutAt ?? null,
  };
}

/** The wait an edge into `waiting` starts at `now`. */
export function startedWait(wait: WaitStart, now: Date): ModelWait {
  return {
    name: wait.name,
    key: wait.key,
    since: now,
    timeoutAt: new Date(now.getTime() + wait.timeoutMs),
  };
}

/**
 * A fenced write of a running claim (R7) by the task's state: it lands only where a claim is
 * held; it starts the effect (R10) only while `leased`, since under `cancel_requested` the step
 * must stop at its boundary (R13); a checkpoint records what happened in either (R19).
 */
export const fencedWrite: Partial<Record<TaskState, { readonly startsEffect: boolean }>> = {
  leased: { startsEffect: true },
  cancel_requested: { startsEffect: false },
};

/** The task row's columns the machine's snapshot decides, by column name. */
export const snapshotColumns = {
  state: (snapshot: TaskSnapshot) => snapshot.state,
  attempt: (snapshot: TaskSnapshot) => snapshot.attempt,
  replay_count: (snapshot: TaskSnapshot) => snapshot.replayCount,
  effect_started: (snapshot: TaskSnapshot) => snapshot.effectStarted,
  run_at: (snapshot: TaskSnapshot) => snapshot.runAt,
  deadline_at: (snapshot: TaskSnapshot) => snapshot.deadlineAt,
  last_error_category: (snapshot: TaskSnapshot) => snapshot.lastErrorCategory,
  last_error: (snapshot: TaskSnapshot) => snapshot.lastError,
} as const;

/**
 * One task edge: its log row (R24), and what it does to the task's engine columns (`columns`
 * is updated in place). `task` is the task as the machine left it; `wait`, for an edge into
 * `waiting`, what it waits for.
 */
export function takeEdge(
  workflowId: string,
  columns: EngineColumns,
  task: RunTask,
  edge: TaskEdge,
  actor: string,
  now: Date,
  cause: EventCause,
  wait: WaitStart | null,
): LogRow {
  const from = columns.last.to_state;
  const to = task.snapshot.state;
  const effect = engineColumnsByEdge[`${from} → ${to}`];
  if (effect === undefined)
    throw new Error(`the edge table has no edge ${from} → ${to} (${edge.reason})`);
  if (effect.lease === 'claim') {
    if (cause.holder === undefined) throw new Error(`a claim of ${task.step} without a holder`);
    columns.epoch += 1;
    columns.lease = { holder: cause.holder, expiresAt: new Date(now.getTime() + leaseMs) };
  } else if (effect.lease === 'none') {
    columns.lease = null;
  }
  columns.receipt =
    effect.receipt === 'await' && cause.receipt !== undefined
      ? {
          id: cause.receipt.id,
          deadlineAt: new Date(now.getTime() + cause.receipt.timeoutMs),
        }
      : null;
  if (effect.output === 'store' && cause.output !== undefined) columns.output = cause.output;
  if (effect.wait === 'start' && wait === null) {
    throw new Error(`${task.step} starts waiting without its event`);
  }
  columns.wait = effect.wait === 'start' && wait !== null ? startedWait(wait, now) : null;
  const row: LogRow = {
    workflow_id: workflowId,
    task_id: task.taskId,
    step: task.step,
    from_state: from,
    to_state: to,
    reason: edge.reason,
    error_category: edge.errorCategory,
    error_summary: edge.errorSummary,
    actor,
    attempt: task.snapshot.attempt,
    // R23: the row of an edge into awaiting_receipt says which receipt it waits for; R42: the
    // row of an edge into waiting what it waits for and when it gives up.
    detail:
      columns.receipt !== null
        ? { ...edge.detail, receiptId: columns.receipt.id }
        : columns.wait !== null
          ? { ...edge.detail, ...waitDetail(columns.wait) }
          : edge.detail,
  };
  columns.last = row;
  return row;
}

/** R42: what a row that starts a wait says of it: the event, its key, when it gives up. */
export function waitDetail(wait: ModelWait): Record<string, unknown> {
  return { eventName: wait.name, eventKey: wait.key, timeoutAt: wait.timeoutAt.toISOString() };
}

/**
 * The parent's row (the aggregation table): at creation from nothing, by the client; afterwards naming the step,
 * reason and actor of the edge that moved it. A workflow row has no attempt of its own.
 */
export function parentRow(
  workflowId: string,
  from: WorkflowState | null,
  to: WorkflowState,
  cause: LogRow | null,
): LogRow {
  return {
    workflow_id: workflowId,
    task_id: null,
    step: null,
    from_state: from,
    to_state: to,
    reason: cause?.reason ?? 'submitted',
    error_category: null,
    error_summary: null,
    actor: cause?.actor ?? 'client',
    attempt: 0,
    detail: cause === null ? null : { step: cause.step },
  };
}
