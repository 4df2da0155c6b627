import { parseActor } from '@causeway/workflow/internal';
import type { Transaction } from 'kysely';
import { eventFindFirstMatches, eventKeysLock } from '../../db/events/event-queries';
import type { CausewayDatabase } from '../../db/schema';
import type { NewDeliveryRow } from '../../db/settle/run-changes-write';
import type { NewTransitionRow } from '../../db/transition-row';
import { noteStoredEventWaits } from '../tracing/committed-wait-spans';
import type { EventRequest } from './event-request';
import type { RunState } from './run-state';

/**
 * The `event_received` requests of waits that meet an event stored before them (R37): the
 * first of their (name, key) received since their workflow was accepted, found under the
 * (name, key) locks a send also takes, so an event sent concurrently is either found here or
 * finds the wait. `outputOf` is the step's output for a payload (null: its schema refuses it,
 * and the event does not match).
 */
export async function storedEventRequests(
  tx: Transaction<CausewayDatabase>,
  waits: readonly {
    readonly taskId: string;
    readonly workflowId: string;
    readonly name: string;
    readonly key: string;
  }[],
  outputOf: (taskId: string, payload: unknown) => string | null,
): Promise<EventRequest[]> {
  if (waits.length === 0) return [];
  await eventKeysLock(tx, waits);
  const workflowOf = new Map(waits.map((wait) => [wait.taskId, wait.workflowId]));
  return (await eventFindFirstMatches(tx, waits)).flatMap(({ taskId, event }) => {
    const outputJson = outputOf(taskId, event.payload);
    return outputJson === null
      ? []
      : [
          {
            taskId,
            workflowId: workflowOf.get(taskId) as string,
            event: {
              type: 'event_received' as const,
              actor: parseActor(event.sentBy),
              eventId: event.id,
              ...(event.reason === null ? {} : { reason: event.reason }),
            },
            extra: { outputJson },
          },
        ];
  });
}

/**
 * Completes the waits this decision started with events stored before them. A completion may
 * start further waits (an event step after an event step): repeated until none is left.
 */
export async function completeWaitsWithStoredEvents(
  tx: Transaction<CausewayDatabase>,
  state: RunState,
): Promise<void> {
  for (let waits = state.takeWaitEntries(); waits.length > 0; waits = state.takeWaitEntries()) {
    const requests = await storedEventRequests(tx, waits, (taskId, payload) =>
      state.eventOutputJson(taskId, payload),
    );
    const outcomes = requests.map((request) => state.apply(request, undefined));
    noteStoredEventWaits(tx, requests, outcomes);
  }
}

/** The deliveries of the `event_received` edges of a decision (R38). */
export function deliveriesOf(transitions: readonly NewTransitionRow[]): NewDeliveryRow[] {
  return transitions.flatMap((row) =>
    row.reason === 'event_received' &&
    row.taskId !== null &&
    typeof row.detail?.eventId === 'string'
      ? [{ eventId: row.detail.eventId, taskId: row.taskId, workflowId: row.workflowId }]
      : [],
  );
}
