import { randomUUID } from 'node:crypto';
import {
  type Actor,
  eventOutputJson,
  eventReceivedEdge,
  formatActor,
  type TaskState,
  type WorkflowRegistry,
  type WorkflowStep,
} from '@causeway/workflow/internal';
import type { Kysely } from 'kysely';
import { type EventSendShape, eventSendInOneStatement } from '../../db/events/event-send-statement';
import { isRetryableDatabaseError, isUniqueViolation } from '../../db/pg-errors';
import type { CausewayDatabase, TraceCarrier } from '../../db/schema';
import { oneStatementPaths } from '../one-statement-paths';
import { promotesStepDecidedInFull, stepTableOf } from '../step-table';
import type { DeliveredTask, SendEventAnswer } from './event-answers';

/** An event as `sendEvents` checked it. */
export interface CheckedEvent {
  readonly name: string;
  readonly key: string;
  readonly payloadJson: string;
  readonly idempotencyKey: string | null;
  readonly reason: string | null;
  /** The context it was sent in (R57), stored by the transaction path only. */
  readonly traceContext?: TraceCarrier | null;
}

interface EventSteps {
  /** Every step waiting for this event name may be completed by the one statement. */
  readonly inOne: boolean;
  /** Some step waiting for this event name has a step after it, which it may make ready. */
  readonly promotes: boolean;
  readonly steps: readonly WorkflowStep[];
}

/** What the one statement needs of an engine's definitions, built once per set. */
interface SendTable {
  readonly byEvent: ReadonlyMap<string, EventSteps>;
  readonly shape: EventSendShape;
}

const tables = new WeakMap<WorkflowRegistry, SendTable>();

function sendTableOf(definitions: WorkflowRegistry): SendTable {
  let table = tables.get(definitions);
  if (table !== undefined) return table;
  const entries = definitions.versions.flatMap((definition) =>
    definition.steps.flatMap((step) =>
      step.event === undefined ? [] : [{ definition, step, event: step.event.name }],
    ),
  );
  // The statement knows a step by (workflow, step): with two versions of a workflow served,
  // their events are decided in full, where each waiting workflow's own version is read (R54).
  const names = definitions.versions.map((definition) => definition.name);
  const versioned = new Set(names.filter((name, index) => names.indexOf(name) !== index));
  const byEvent = new Map<string, { inOne: boolean; promotes: boolean; steps: WorkflowStep[] }>();
  for (const { definition, step, event } of entries) {
    const entry = byEvent.get(event) ?? { inOne: true, promotes: false, steps: [] };
    // A completion that makes a delayed or event step ready is decided in full (its run_at,
    // key and timeout are per step), as the settle does.
    if (promotesStepDecidedInFull(definition, step.name) || versioned.has(definition.name)) {
      entry.inOne = false;
    }
    // Only a step after the completed one can become ready: any other pending step's upstream
    // steps are as they were when the last of them finished, which would have made it ready.
    if (definition.steps.some((other) => other.after.includes(step.name))) entry.promotes = true;
    entry.steps.push(step);
    byEvent.set(event, entry);
  }
  const { settle, send } = oneStatementPaths();
  const steps = stepTableOf(definitions);
  table = {
    byEvent,
    shape: {
      ...send,
      promoteFrom: settle.promoteFrom,
      promoteTo: settle.promoteTo,
      promoteReason: settle.promoteReason,
      promoteActor: settle.promoteActor,
      promoteEffects: settle.promoteEffects,
      upstreamState: settle.upstreamState,
      stateOrder: settle.stateOrder,
      presenceMasks: settle.presenceMasks,
      presenceStates: settle.presenceStates,
      stepNames: steps.stepNames,
      stepSteps: steps.stepSteps,
      stepAfter: steps.stepAfter,
      stepOrder: steps.stepOrder,
      stepKeys: steps.stepKeys,
      eventStepWorkflows: entries.map((entry) => entry.definition.name),
      eventStepSteps: entries.map((entry) => entry.step.name),
      eventStepEvents: entries.map((entry) => entry.event),
    },
  };
  tables.set(definitions, table);
  return table;
}

/** What the one-statement send is made of for these definitions (built once per set). */
export function eventSendShapeOf(definitions: WorkflowRegistry): EventSendShape {
  return sendTableOf(definitions).shape;
}

/** The one output every step waiting for the event gives its payload, or null if they differ. */
function commonOutput(steps: readonly WorkflowStep[], payloadJson: string): string | null {
  const payload = JSON.parse(payloadJson) as unknown;
  let output: string | null = null;
  for (const step of steps) {
    const each = eventOutputJson(step, payload);
    if (each === null || (output !== null && each !== output)) return null;
    output = each;
  }
  return output;
}

/**
 * Sends the events in one statement (`eventSendInOneStatement`) when it can decide them all,
 * answering in order; null when the transaction path must: an event some waiting step's
 * completion would need the full decision for, steps that disagree on an event's output, two
 * events of the batch on one (name, key) or idempotency key, or a statement that found a
 * workflow locked, a wait it cannot see, a workflow waiting twice or a used idempotency key
 * (it then wrote nothing).
 */
export async function sendInOneStatement(
  db: Kysely<CausewayDatabase>,
  definitions: WorkflowRegistry,
  events: readonly CheckedEvent[],
  actor: Actor,
): Promise<SendEventAnswer[] | null> {
  const table = sendTableOf(definitions);
  const pairs = new Set<string>();
  const idempotencyKeys = new Set<string>();
  const outputs: string[] = [];
  let promotes = false;
  for (const event of events) {
    const steps = table.byEvent.get(event.name);
    if (steps === undefined || !steps.inOne) return null;
    if (steps.promotes) promotes = true;
    const pair = `${event.name}\n${event.key}`;
    if (pairs.has(pair)) return null;
    pairs.add(pair);
    if (event.idempotencyKey !== null) {
      const keyId = `${event.name}\n${event.idempotencyKey}`;
      if (idempotencyKeys.has(keyId)) return null;
      idempotencyKeys.add(keyId);
    }
    const output = commonOutput(steps.steps, event.payloadJson);
    if (output === null) return null;
    outputs.push(output);
  }
  const ids = events.map(() => randomUUID());
  // The edge detail and actor are the machine's, per event.
  const edges = events.map((event, index) =>
    eventReceivedEdge(actor, ids[index] as string, event.reason ?? undefined),
  );
  let result: Awaited<ReturnType<typeof eventSendInOneStatement>>;
  try {
    result = await eventSendInOneStatement(
      db,
      table.shape,
      {
        ids,
        names: events.map((event) => event.name),
        keys: events.map((event) => event.key),
        payloads: events.map((event) => event.payloadJson),
        idempotencyKeys: events.map((event) => event.idempotencyKey),
        reasons: events.map((event) => event.reason),
        outputs,
        details: edges.map((edge) => JSON.stringify(edge.detail)),
        sentBy: formatActor(actor),
        actor: (edges[0] as (typeof edges)[number]).actor,
      },
      { promotes },
    );
  } catch (error) {
    // The same idempotency key sent concurrently (the transaction path answers the repeat), or
    // a conflict the transaction path retries: it decides these events instead.
    if (isUniqueViolation(error) || isRetryableDatabaseError(error)) return null;
    throw error;
  }
  if (!result.written) return null;
  const tasksOf = new Map<number, DeliveredTask[]>();
  for (const row of result.completed) {
    const task = {
      taskId: row.taskId,
      workflowId: row.workflowId,
      step: row.step,
      state: row.state as TaskState,
    };
    const tasks = tasksOf.get(row.position);
    if (tasks === undefined) tasksOf.set(row.position, [task]);
    else tasks.push(task);
  }
  return ids.map((eventId, index) => ({
    eventId,
    receivedAt: result.receivedAt,
    deduplicated: false,
    tasks: tasksOf.get(index + 1) ?? [],
  }));
}
