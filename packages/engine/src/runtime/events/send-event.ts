import { randomUUID } from 'node:crypto';
import {
  type Actor,
  checkEvent,
  defaultAdmissionLimits,
  eventOutputJson,
  eventStepsByName,
  formatActor,
  idempotencyKeyProblem,
  type WorkflowDefinition,
} from '@causeway/workflow/internal';
import type { Transaction } from 'kysely';
import {
  eventDeliveredTasks,
  eventInsertWithWaiters,
  eventKeysLock,
  eventListByIdempotencyKeys,
  type StoredEvent,
} from '../../db/events/event-queries';
import { waitersLock } from '../../db/events/waiters-lock';
import { isRetryableDatabaseError } from '../../db/pg-errors';
import type { CausewayDatabase } from '../../db/schema';
import { EngineError } from '../../errors';
import type { EngineContext } from '../context';
import { decideAndWrite } from '../decision/apply-events';
import type { EventRequest } from '../decision/event-request';
import { requesterActor, requesterReasonText } from '../operations/operations';
import { forgetWaitsOfEvents, transactionRecordingWaits } from '../tracing/committed-wait-spans';
import { completedWaitSpans } from '../tracing/event-spans';
import { activeTraceCarrier } from '../tracing/trace-context';
import type { DeliveredTask, SendEventAnswer } from './event-answers';
import { type CheckedEvent, sendInOneStatement } from './one-statement-send';

export type { DeliveredTask, SendEventAnswer } from './event-answers';

/** One event of a `sendEvents` batch. */
export interface EventToSend {
  readonly name: string;
  readonly key: string;
  readonly payload: unknown;
  /** A repeat with the same key (for this event name) answers the first send, writing nothing. */
  readonly idempotencyKey?: string;
  /**
   * Why it is sent, in the sender's words (at most 1,000 characters; blank is none): kept on
   * the event and on the edges it completes (`detail.operatorReason`). A repeat keeps the
   * first send's.
   */
  readonly reason?: string;
}

export interface SendEventOptions {
  readonly idempotencyKey?: string;
  /** Who sends it: an operator by name, or (by default) a client. */
  readonly operator?: string;
  /** See `EventToSend.reason`. */
  readonly reason?: string;
}

type Checked = CheckedEvent;

const stepsByEngine = new WeakMap<
  ReadonlyMap<string, unknown>,
  ReturnType<typeof eventStepsByName>
>();
const maxRounds = 8;

/** A wait started after the first look; the send starts again, locking its workflow too. */
class WaitersMoved extends Error {
  constructor(readonly workflowIds: readonly string[]) {
    super('new waiters appeared');
  }
}

/**
 * Stores events and, in the same transaction, completes every task waiting for them (R38),
 * answering in order. Every event is checked before anything is written; one refused event
 * refuses the batch with a stable code. The common case is one statement
 * (`sendInOneStatement`); whatever it cannot decide goes to the transaction path.
 */
export async function sendEvents(
  context: EngineContext,
  events: readonly EventToSend[],
  options: { readonly operator?: string } = {},
): Promise<SendEventAnswer[]> {
  const checked = checkedEvents(context, events);
  const actor = requesterActor(
    options.operator === undefined ? {} : { operator: options.operator },
  );
  if (checked.length === 0) return [];
  // A send in a span stores its context with the event (R57): the transaction path writes it.
  const traceContext = activeTraceCarrier();
  if (traceContext !== null) {
    const traced = checked.map((event) => ({ ...event, traceContext }));
    const answers = await sendEventsInFull(context, traced, actor);
    await completedWaitSpans(context, answers, traceContext);
    return answers;
  }
  const inOne = await sendInOneStatement(context.db, context.definitions, checked, actor);
  if (inOne !== null) return inOne;
  return sendEventsInFull(context, checked, actor);
}

/**
 * The transaction path of `sendEvents`: every case, decided by the full decision. Lock order:
 * the waiters' workflows (id order), then the (name, key) locks; a wait that appears between
 * the two starts the transaction again with its workflow, so no transaction holding a key
 * lock ever waits for a workflow lock.
 */
export async function sendEventsInFull(
  context: EngineContext,
  checked: readonly Checked[],
  actor: Actor,
): Promise<SendEventAnswer[]> {
  let extraWorkflows: readonly string[] = [];
  for (let round = 1; ; round += 1) {
    try {
      return await transactionRecordingWaits(context, (tx) =>
        sendInTransaction(tx, context, checked, { actor, extraWorkflows }),
      );
    } catch (error) {
      if (round >= maxRounds) throw error;
      if (error instanceof WaitersMoved) extraWorkflows = error.workflowIds;
      else if (!isRetryableDatabaseError(error)) throw error;
    }
  }
}

/** Checks every event of a batch (R38, R34), throwing the first refusal's stable code. */
export function checkedEvents(
  context: Pick<EngineContext, 'definitions'>,
  events: readonly EventToSend[],
): CheckedEvent[] {
  let steps = stepsByEngine.get(context.definitions);
  if (steps === undefined) {
    steps = eventStepsByName(context.definitions.versions);
    stepsByEngine.set(context.definitions, steps);
  }
  const known = steps;
  return events.map((event, index) => checkOne(known, event, events.length > 1 ? index : null));
}

function checkOne(
  steps: ReturnType<typeof eventStepsByName>,
  event: EventToSend,
  index: number | null,
): Checked {
  const where = index === null ? '' : ` (event ${index})`;
  const details = index === null ? { name: event.name } : { name: event.name, index };
  const admission = checkEvent(steps, event.name, event.key, event.payload);
  if (!admission.ok) throw new EngineError(admission.code, `${admission.message}${where}`, details);
  const idempotencyKey = event.idempotencyKey ?? null;
  const keyProblem =
    idempotencyKey === null
      ? null
      : idempotencyKeyProblem(idempotencyKey, defaultAdmissionLimits.maxIdempotencyKeyLength);
  if (keyProblem !== null) {
    throw new EngineError('invalid_idempotency_key', `${keyProblem}${where}`, details);
  }
  const reason = requesterReasonText({ reason: event.reason }, { where, details }) ?? null;
  return {
    name: event.name,
    key: event.key,
    payloadJson: admission.payloadJson,
    idempotencyKey,
    reason,
  };
}

async function sendInTransaction(
  tx: Transaction<CausewayDatabase>,
  context: EngineContext,
  events: readonly Checked[],
  options: { readonly actor: Actor; readonly extraWorkflows: readonly string[] },
): Promise<SendEventAnswer[]> {
  const loaded = await waitersLock(tx, events, options.extraWorkflows);
  const locked = new Set(loaded.workflows.map((workflow) => workflow.id));
  await eventKeysLock(tx, events);
  const existing = await storedByIdempotencyKey(tx, events);
  // Each event is new, a repeat of a stored one, or a repeat of one earlier in the batch.
  const ids: string[] = [];
  const fresh: (Checked & { readonly id: string })[] = [];
  const firstOfKey = new Map<string, string>();
  for (const event of events) {
    const keyId = event.idempotencyKey === null ? null : `${event.name}\n${event.idempotencyKey}`;
    const stored = keyId === null ? undefined : (existing.get(keyId) ?? firstOfKey.get(keyId));
    if (stored !== undefined) {
      ids.push(typeof stored === 'string' ? stored : stored.id);
      continue;
    }
    const id = randomUUID();
    if (keyId !== null) firstOfKey.set(keyId, id);
    ids.push(id);
    fresh.push({ ...event, id });
  }
  // Under the key locks every wait that began before is committed and visible now.
  const { receivedAt, waiting } =
    fresh.length === 0
      ? { receivedAt: null, waiting: [] }
      : await eventInsertWithWaiters(
          tx,
          fresh.map((event) => ({ ...event, sentBy: formatActor(options.actor) })),
        );
  const moved = waiting.filter((task) => !locked.has(task.workflowId));
  if (moved.length > 0) {
    throw new WaitersMoved([...locked, ...moved.map((task) => task.workflowId)]);
  }
  const requests: EventRequest[] = [];
  const freshByKey = new Map<string, (typeof fresh)[number]>();
  for (const event of [...fresh].reverse()) freshByKey.set(`${event.name}\n${event.key}`, event);
  const recordById = new Map(loaded.tasks.map((record) => [record.id, record]));
  const workflowById = new Map(loaded.workflows.map((workflow) => [workflow.id, workflow]));
  for (const task of waiting) {
    // The first event of the batch for its (name, key) completes it.
    const event = freshByKey.get(`${task.name}\n${task.key}`);
    const record = recordById.get(task.taskId);
    const workflow = workflowById.get(task.workflowId);
    // Only a workflow whose version this engine defines (R54): another version's engine
    // completes its wait from the stored event within a sweep interval.
    const definition =
      workflow === undefined ? undefined : context.definitions.at(workflow.name, workflow.version);
    const step = definition?.steps.find((s) => s.name === record?.step);
    // A wait of a workflow accepted after the event never matches it (R37).
    if (event === undefined || workflow === undefined || step === undefined) continue;
    if (receivedAt !== null && workflow.createdAt > receivedAt) continue;
    // Nor one of a workflow stored before versions with a step this engine does not define.
    if (!definesEveryTask(definition, loaded.tasks, task.workflowId)) continue;
    const outputJson = eventOutputJson(step, JSON.parse(event.payloadJson));
    if (outputJson === null) continue;
    requests.push({
      taskId: task.taskId,
      workflowId: task.workflowId,
      event: {
        type: 'event_received',
        actor: options.actor,
        eventId: event.id,
        ...(event.reason === null ? {} : { reason: event.reason }),
      },
      extra: { outputJson },
    });
  }
  const result = await decideAndWrite(tx, context.apply, loaded, requests, {});
  const freshIds = new Set(fresh.map((event) => event.id));
  // A batch's later event may complete a wait its earlier one started: the send answers it.
  forgetWaitsOfEvents(tx, freshIds);
  // What the fresh events completed is in this decision; repeats read their deliveries.
  const completed = result.transitions.flatMap((row) => {
    const task = row.taskId === null ? undefined : result.tasks.get(row.taskId);
    return row.reason !== 'event_received' || task === undefined
      ? []
      : [
          {
            eventId: String(row.detail?.eventId),
            taskId: task.id,
            workflowId: task.workflowId,
            step: task.step,
            state: task.state,
          },
        ];
  });
  const repeats = ids.filter((id) => !freshIds.has(id));
  const delivered = [...completed, ...(await eventDeliveredTasks(tx, [...new Set(repeats)]))];
  return answersOf(ids, fresh, existing, receivedAt, delivered);
}

/** Whether `definition` has the step of every task of the workflow (its submitted steps). */
function definesEveryTask(
  definition: WorkflowDefinition | undefined,
  tasks: readonly { readonly workflowId: string; readonly step: string }[],
  workflowId: string,
): boolean {
  const steps = definition?.steps ?? [];
  return tasks.every(
    (other) =>
      other.workflowId !== workflowId || steps.some((defined) => defined.name === other.step),
  );
}

async function storedByIdempotencyKey(
  tx: Transaction<CausewayDatabase>,
  events: readonly Checked[],
): Promise<Map<string, StoredEvent>> {
  const keyed = events.flatMap((event) =>
    event.idempotencyKey === null
      ? []
      : [{ name: event.name, idempotencyKey: event.idempotencyKey }],
  );
  const stored = await eventListByIdempotencyKeys(tx, keyed);
  const byKey = new Map(stored.map((event) => [`${event.name}\n${event.idempotencyKey}`, event]));
  for (const event of events) {
    const found = byKey.get(`${event.name}\n${event.idempotencyKey}`);
    if (found !== undefined && found.key !== event.key) {
      throw new EngineError(
        'conflict',
        `idempotency key ${JSON.stringify(event.idempotencyKey)} was used for key ${JSON.stringify(found.key)} of ${event.name}`,
      );
    }
  }
  return byKey;
}

function answersOf(
  ids: readonly string[],
  fresh: readonly { readonly id: string }[],
  existing: ReadonlyMap<string, StoredEvent>,
  receivedAt: Date | null,
  delivered: readonly (DeliveredTask & { readonly eventId: string })[],
): SendEventAnswer[] {
  const storedAt = new Map([...existing.values()].map((event) => [event.id, event.receivedAt]));
  const freshIds = new Set(fresh.map((event) => event.id));
  const byEvent = new Map<string, DeliveredTask[]>();
  for (const { eventId, ...task } of delivered) {
    const tasks = byEvent.get(eventId);
    if (tasks === undefined) byEvent.set(eventId, [task]);
    else tasks.push(task);
  }
  const seen = new Set<string>();
  return ids.map((eventId) => {
    // A repeat within the batch is a deduplicated answer too.
    const deduplicated = !freshIds.has(eventId) || seen.has(eventId);
    seen.add(eventId);
    return {
      eventId,
      receivedAt: storedAt.get(eventId) ?? (receivedAt as Date),
      deduplicated,
      tasks: byEvent.get(eventId) ?? [],
    };
  });
}
