import { randomUUID } from 'node:crypto';
import {
  type Actor,
  checkEvent,
  defaultAdmissionLimits,
  eventOutputJson,
  eventStepsByName,
  formatActor,
  type TaskState,
  type WorkflowStep,
} from '@causeway/workflow';
import type { Transaction } from 'kysely';
import {
  eventDeliveredTasks,
  eventFindByIdempotencyKey,
  eventInsert,
  eventKeysLock,
  taskListWaitingFor,
} from '../../db/events/event-queries';
import { isRetryableDatabaseError } from '../../db/pg-errors';
import type { CausewayDatabase } from '../../db/schema';
import { workflowLockWithTasks } from '../../db/settle/workflow-lock';
import { EngineError } from '../../errors';
import type { EngineContext } from '../context';
import { decideAndWrite } from '../decision/apply-events';
import type { EventRequest } from '../decision/event-request';

export interface SendEventOptions {
  /** A repeat with the same key (for this event name) answers the first send, writing nothing. */
  readonly idempotencyKey?: string;
  /** Who sends it: an operator by name, or (by default) a client. */
  readonly operator?: string;
}

/** A task an event completed, as it is after the send. */
export interface DeliveredTask {
  readonly taskId: string;
  readonly workflowId: string;
  readonly step: string;
  readonly state: TaskState;
}

export interface SendEventAnswer {
  readonly eventId: string;
  readonly receivedAt: Date;
  /** True when an event with this idempotency key was stored before: nothing was written. */
  readonly deduplicated: boolean;
  /** The tasks the event completed (for a repeat: so far, at its send or later). */
  readonly tasks: readonly DeliveredTask[];
}

const stepsByEngine = new WeakMap<EngineContext, ReturnType<typeof eventStepsByName>>();
const maxRounds = 8;

/** A wait started after the first look; the send starts again, locking its workflow too. */
class WaitersMoved extends Error {
  constructor(readonly workflowIds: readonly string[]) {
    super('new waiters appeared');
  }
}

/**
 * Stores an event and, in the same transaction, completes every task waiting for it (R38).
 * Refused with a stable code, writing nothing, for an unknown name, a bad key, or a payload
 * that a waiting step's schema refuses, too large or unstorable. Lock order: the waiters'
 * workflows (id order), then the (name, key) lock; a wait that appears between the two
 * starts the transaction again with its workflow, so no transaction holding the key lock
 * ever waits for a workflow lock.
 */
export async function sendEvent(
  context: EngineContext,
  name: string,
  key: string,
  payload: unknown,
  options: SendEventOptions = {},
): Promise<SendEventAnswer> {
  let steps = stepsByEngine.get(context);
  if (steps === undefined) {
    steps = eventStepsByName(context.definitions.values());
    stepsByEngine.set(context, steps);
  }
  const admission = checkEvent(steps, name, key, payload, defaultAdmissionLimits.maxInputBytes);
  if (!admission.ok) throw new EngineError(admission.code, admission.message, { name });
  const idempotencyKey = options.idempotencyKey ?? null;
  if (
    idempotencyKey !== null &&
    (typeof idempotencyKey !== 'string' ||
      idempotencyKey.length === 0 ||
      idempotencyKey.length > defaultAdmissionLimits.maxIdempotencyKeyLength ||
      !idempotencyKey.isWellFormed() ||
      idempotencyKey.includes('\u0000'))
  ) {
    throw new EngineError(
      'invalid_idempotency_key',
      `the idempotency key must be 1 to ${defaultAdmissionLimits.maxIdempotencyKeyLength} storable characters`,
    );
  }
  const actor = senderActor(options.operator);
  let extraWorkflows: readonly string[] = [];
  for (let round = 1; ; round += 1) {
    try {
      return await context.db.transaction().execute((tx) =>
        sendInTransaction(
          tx,
          context,
          { name, key, payloadJson: admission.payloadJson },
          {
            actor,
            idempotencyKey,
            extraWorkflows,
          },
        ),
      );
    } catch (error) {
      if (round >= maxRounds) throw error;
      if (error instanceof WaitersMoved) extraWorkflows = error.workflowIds;
      else if (!isRetryableDatabaseError(error)) throw error;
    }
  }
}

async function sendInTransaction(
  tx: Transaction<CausewayDatabase>,
  context: EngineContext,
  event: { readonly name: string; readonly key: string; readonly payloadJson: string },
  options: {
    readonly actor: Actor;
    readonly idempotencyKey: string | null;
    readonly extraWorkflows: readonly string[];
  },
): Promise<SendEventAnswer> {
  const before = await taskListWaitingFor(tx, event.name, event.key);
  const workflowIds = new Set([
    ...before.map((task) => task.workflowId),
    ...options.extraWorkflows,
  ]);
  const loaded = await workflowLockWithTasks(tx, [...workflowIds], { skipLocked: false });
  await eventKeysLock(tx, [event]);
  if (options.idempotencyKey !== null) {
    const existing = await eventFindByIdempotencyKey(tx, event.name, options.idempotencyKey);
    if (existing !== null) {
      if (existing.key !== event.key) {
        throw new EngineError(
          'conflict',
          `idempotency key ${JSON.stringify(options.idempotencyKey)} was used for key ${JSON.stringify(existing.key)} of ${event.name}`,
        );
      }
      return answerOf(tx, existing.id, existing.receivedAt, true);
    }
  }
  const stored = await eventInsert(tx, {
    id: randomUUID(),
    name: event.name,
    key: event.key,
    payloadJson: event.payloadJson,
    idempotencyKey: options.idempotencyKey,
    sentBy: formatActor(options.actor),
  });
  // Under the key lock every wait that began before is committed and visible now.
  const waiting = await taskListWaitingFor(tx, event.name, event.key);
  const locked = new Set(loaded.workflows.map((workflow) => workflow.id));
  const moved = waiting.filter((task) => !locked.has(task.workflowId));
  if (moved.length > 0) {
    throw new WaitersMoved([...workflowIds, ...moved.map((task) => task.workflowId)]);
  }
  const payload: unknown = JSON.parse(event.payloadJson);
  const requests: EventRequest[] = [];
  for (const task of waiting) {
    const record = loaded.tasks.find((candidate) => candidate.id === task.taskId);
    const workflow = loaded.workflows.find((candidate) => candidate.id === task.workflowId);
    const step = stepOf(context, workflow?.name, record?.step);
    // A wait of a workflow accepted after the event never matches it (R37).
    if (workflow === undefined || step === undefined || workflow.createdAt > stored.receivedAt) {
      continue;
    }
    const outputJson = eventOutputJson(step, payload);
    if (outputJson === null) continue;
    requests.push({
      taskId: task.taskId,
      workflowId: task.workflowId,
      event: { type: 'event_received', actor: options.actor, eventId: stored.id },
      extra: { outputJson },
    });
  }
  await decideAndWrite(tx, context.apply, loaded, requests, {});
  return answerOf(tx, stored.id, stored.receivedAt, false);
}

function stepOf(
  context: EngineContext,
  workflowName: string | undefined,
  stepName: string | undefined,
): WorkflowStep | undefined {
  if (workflowName === undefined) return undefined;
  return context.definitions.get(workflowName)?.steps.find((step) => step.name === stepName);
}

async function answerOf(
  tx: Transaction<CausewayDatabase>,
  eventId: string,
  receivedAt: Date,
  deduplicated: boolean,
): Promise<SendEventAnswer> {
  const tasks = (await eventDeliveredTasks(tx, eventId)).map(
    (task): DeliveredTask => ({ ...task, state: task.state as TaskState }),
  );
  return { eventId, receivedAt, deduplicated, tasks };
}

function senderActor(operator: string | undefined): Actor {
  if (operator === undefined) return { kind: 'client' };
  const name = operator.trim();
  if (name.length === 0 || name.length > 200) {
    throw new EngineError('invalid_request', 'the operator name must be 1 to 200 characters');
  }
  return { kind: 'operator', name };
}
