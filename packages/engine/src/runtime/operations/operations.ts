import {
  type Actor,
  type ErrorCategory,
  formatActor,
  isErrorCategory,
  type ReasonCode,
  reasonCodes,
  receiptAwaitingState,
  type TaskEvent,
  type TaskState,
  textStorageProblem,
  type WorkflowState,
} from '@causeway/workflow/internal';
import {
  taskLastReason,
  taskListDeadByReason,
  taskRecordLateCancel,
} from '../../db/operations/operation-queries';
import { EngineError } from '../../errors';
import type { EngineContext } from '../context';
import { applyEvents } from '../decision/apply-events';
import type { ApplyResult, EventOutcome } from '../decision/event-request';
import { transactionRetried } from './conflict-retry';

/** Who asked: an operator by name, or a client. */
export interface Requester {
  readonly operator?: string;
  /** Why, in the requester's words: kept on the edge as `detail.operatorReason`. */
  readonly reason?: string;
}

export interface TaskAnswer {
  readonly taskId: string;
  readonly state: TaskState;
  /** True when this call wrote an edge; a repeat answers the same state with false. */
  readonly changed: boolean;
  /** The reason code of the task's latest edge: why it is in `state` (R15). */
  readonly reason: ReasonCode;
  /** Why nothing changed, when nothing did: `cancel_already_requested`, `effect_already_submitted`, `terminal_state`… */
  readonly refusal?: string;
  readonly message?: string;
}

export type ReceiptOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly category: ErrorCategory; readonly message: string };

/** The requester as an actor: an operator by a name of 1 to 200 characters, or the client. */
export function requesterActor(requester: Requester): Actor {
  if (requester.operator === undefined) return { kind: 'client' };
  const name = requester.operator.trim();
  if (name.length === 0 || name.length > 200) {
    throw new EngineError('invalid_request', 'the operator name must be 1 to 200 characters');
  }
  return { kind: 'operator', name };
}

async function applyOne(
  context: EngineContext,
  taskId: string,
  event: TaskEvent,
): Promise<{ outcome: EventOutcome; result: ApplyResult }> {
  assertUuid(taskId, 'task');
  const result = await transactionRetried(context, (tx) =>
    applyEvents(tx, context.apply, [{ taskId, event }]),
  );
  const outcome = result.outcomes[0];
  if (outcome === undefined || outcome.kind === 'skipped') {
    throw new EngineError('not_found', `no task has the id ${taskId}`, { taskId });
  }
  if (outcome.kind === 'undefined_workflow') {
    throw new EngineError(
      'conflict',
      `task ${taskId} belongs to a "${outcome.name}", which this engine does not define`,
      {
        taskId,
      },
    );
  }
  return { outcome, result };
}

/**
 * What a call answers for one task: as the call's transaction left it. An applied event's own
 * edge may not be the task's last one in the transaction: a replayed event step that waits
 * again takes an event kept for it at once (R37, R39), so the answer is the task's latest
 * state and the reason of its latest edge, not those of the replay edge.
 */
async function answer(
  context: EngineContext,
  outcome: EventOutcome,
  result: ApplyResult,
): Promise<TaskAnswer> {
  switch (outcome.kind) {
    case 'applied': {
      const latest = result.transitions.findLast((row) => row.taskId === outcome.taskId);
      return {
        taskId: outcome.taskId,
        state: result.tasks.get(outcome.taskId)?.state ?? outcome.task.state,
        changed: true,
        reason: (latest?.reason ?? outcome.edge.reason) as ReasonCode,
      };
    }
    case 'refused':
      return {
        taskId: outcome.taskId,
        state: outcome.task.state,
        changed: false,
        reason: ((await taskLastReason(context.db, outcome.taskId)) ?? 'submitted') as ReasonCode,
        refusal: outcome.refusal.code,
        message: outcome.refusal.message,
      };
    default:
      throw new Error(`unexpected outcome ${outcome.kind}`);
  }
}

/**
 * Cancels one task (R12–R15): `pending`/`queued` → `cancelled`, `leased` → `cancel_requested`.
 * Idempotent: a repeat, or a cancel of a task already past the point of no return, answers
 * its current state without writing anything.
 */
export async function cancelTask(
  context: EngineContext,
  taskId: string,
  requester: Requester,
): Promise<TaskAnswer> {
  const actor = requesterActor(requester);
  const reason = requesterReasonText(requester);
  const { outcome, result } = await applyOne(
    context,
    taskId,
    reason === undefined ? { type: 'cancel', actor } : { type: 'cancel', actor, reason },
  );
  if (outcome.kind === 'refused' && outcome.refusal.code === 'effect_already_submitted') {
    // R14: the cancel did not catch the submission; it is recorded, not an edge.
    await taskRecordLateCancel(context.db, taskId, formatActor(actor));
  }
  return answer(context, outcome, result);
}

export interface WorkflowCancelAnswer {
  readonly workflowId: string;
  readonly state: WorkflowState;
  readonly changed: boolean;
}

/** Cancels every task of a workflow that can still be stopped; a repeat writes nothing. */
export async function cancelWorkflow(
  context: EngineContext,
  workflowId: string,
  requester: Requester,
): Promise<WorkflowCancelAnswer> {
  assertUuid(workflowId, 'workflow');
  const actor = requesterActor(requester);
  const result = await transactionRetried(context, (tx) =>
    applyEvents(tx, context.apply, [], {
      workflowCancels: [{ workflowId, actor, reason: requesterReasonText(requester) }],
    }),
  );
  const cancel = result.workflowCancels[0];
  for (const task of result.tasks.values()) {
    if (task.workflowId === workflowId && task.state === receiptAwaitingState) {
      await taskRecordLateCancel(context.db, task.id, formatActor(actor));
    }
  }
  if (cancel?.state === undefined)
    throw new EngineError('not_found', `no workflow has the id ${workflowId}`, { workflowId });
  return { workflowId, state: cancel.state, changed: cancel.edges > 0 };
}

/** Operator replay of a dead task (R26): operator name and reason are required. */
export async function replayTask(
  context: EngineContext,
  taskId: string,
  request: { readonly operator: string; readonly reason: string },
): Promise<TaskAnswer> {
  const actor = operatorActor(request);
  const { outcome, result } = await applyOne(context, taskId, {
    type: 'replay',
    actor,
    reason: request.reason.trim(),
    bulk: false,
  });
  if (outcome.kind === 'refused' && outcome.refusal.code === 'step_input_failed') {
    // R58: waiting again on a key that still fails would be a wait nothing can match.
    throw new EngineError('conflict', `the task cannot be replayed: ${outcome.refusal.message}`, {
      taskId,
      state: outcome.task.state,
      refusal: outcome.refusal.code,
    });
  }
  if (outcome.kind === 'refused') {
    throw new EngineError(
      'conflict',
      `only a dead task can be replayed; this one is ${outcome.task.state}`,
      {
        taskId,
        state: outcome.task.state,
      },
    );
  }
  return answer(context, outcome, result);
}

export interface RequeueRequest {
  readonly reasonCode: ReasonCode;
  readonly from: Date;
  readonly to: Date;
  readonly operator: string;
  readonly reason: string;
}

/**
 * Bulk requeue (R26): every dead task whose dead edge has `reasonCode` and happened in
 * [from, to] goes back to `queued` (`bulk_requeue`), answering each task's new state.
 */
export async function requeueDead(
  context: EngineContext,
  request: RequeueRequest,
): Promise<TaskAnswer[]> {
  const actor = operatorActor(request);
  if (!(reasonCodes as readonly string[]).includes(request.reasonCode)) {
    throw new EngineError(
      'invalid_request',
      `unknown reason code ${JSON.stringify(request.reasonCode)}`,
    );
  }
  if (
    !(request.from instanceof Date) ||
    !(request.to instanceof Date) ||
    Number.isNaN(request.from.getTime()) ||
    Number.isNaN(request.to.getTime()) ||
    request.from > request.to
  ) {
    throw new EngineError('invalid_request', 'the time range needs valid dates with from <= to');
  }
  const ids = await taskListDeadByReason(context.db, request.reasonCode, request.from, request.to);
  if (ids.length === 0) return [];
  const result = await transactionRetried(context, (tx) =>
    applyEvents(
      tx,
      context.apply,
      ids.map((taskId) => ({
        taskId,
        event: {
          type: 'replay',
          actor,
          reason: request.reason.trim(),
          bulk: true,
        } satisfies TaskEvent,
      })),
    ),
  );
  return Promise.all(
    result.outcomes.flatMap((outcome) =>
      outcome.kind === 'applied' || outcome.kind === 'refused'
        ? [answer(context, outcome, result)]
        : [],
    ),
  );
}

/**
 * A receipt for a task awaiting one (R23). A receipt for a task that is no longer waiting
 * (a duplicate, a late one) changes nothing and answers the current state.
 */
export async function recordReceipt(
  context: EngineContext,
  taskId: string,
  outcome: ReceiptOutcome,
): Promise<TaskAnswer> {
  const actor: Actor = { kind: 'receipt' };
  if (!outcome.ok && !isErrorCategory(outcome.category)) {
    throw new EngineError(
      'invalid_request',
      `unknown error category ${JSON.stringify(outcome.category)}`,
    );
  }
  const event: TaskEvent = outcome.ok
    ? { type: 'receipt_confirmed', actor }
    : {
        type: 'receipt_rejected',
        actor,
        category: outcome.category,
        summary: outcome.message.slice(0, 500),
      };
  const { outcome: applied, result } = await applyOne(context, taskId, event);
  return answer(context, applied, result);
}

function operatorActor(request: { readonly operator: string; readonly reason: string }): Actor {
  const actor = requesterActor({ operator: request.operator });
  if (
    typeof request.reason !== 'string' ||
    request.reason.trim().length === 0 ||
    request.reason.length > 1_000
  ) {
    throw new EngineError(
      'invalid_request',
      'an operator action needs a reason of 1 to 1,000 characters',
    );
  }
  return actor;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs; anything else is simply not found (and never reaches SQL as a bad cast). */
export function assertUuid(id: string, what: 'task' | 'workflow'): void {
  if (typeof id !== 'string' || !uuidPattern.test(id)) {
    throw new EngineError('not_found', `no ${what} has the id ${JSON.stringify(id)}`);
  }
}

/**
 * The requester's optional reason, trimmed (blank: none). Refused with `invalid_request` when
 * it is not text, over 1,000 characters, or text Postgres cannot store. `where` and `details`
 * place the refusal (an event of a batch).
 */
export function requesterReasonText(
  requester: Pick<Requester, 'reason'>,
  place: { readonly where?: string; readonly details?: Record<string, unknown> } = {},
): string | undefined {
  const reason: unknown = requester.reason;
  if (reason === undefined) return undefined;
  const refuse = (problem: string) =>
    new EngineError('invalid_request', `${problem}${place.where ?? ''}`, place.details);
  if (typeof reason !== 'string' || reason.length > 1_000) {
    throw refuse('a reason must be at most 1,000 characters');
  }
  const unstorable = textStorageProblem(reason);
  if (unstorable !== null) throw refuse(`a reason cannot hold ${unstorable}`);
  const text = reason.trim();
  return text === '' ? undefined : text;
}
