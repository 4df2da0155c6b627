import { parseActor } from '@causeway/workflow';
import type { Transaction } from 'kysely';
import { eventFindFirstMatches, eventKeysLock } from '../../db/events/event-queries';
import type { CausewayDatabase } from '../../db/schema';
import type { NewDeliveryRow } from '../../db/settle/run-changes-write';
import type { NewTransitionRow } from '../../db/transition-row';
import type { RunState } from './run-state';

/**
 * Completes the waits this decision started with events stored before (R37: an event that
 * arrived while earlier steps still ran is not lost). Under the (name, key) locks a send also
 * takes, so an event sent concurrently is either seen here or sees the wait. A completion may
 * start further waits (an event step after an event step): repeated until none is left.
 */
export async function completeWaitsWithStoredEvents(
  tx: Transaction<CausewayDatabase>,
  state: RunState,
): Promise<void> {
  for (let waits = state.takeWaitEntries(); waits.length > 0; waits = state.takeWaitEntries()) {
    await eventKeysLock(tx, waits);
    const matches = await eventFindFirstMatches(tx, waits);
    for (const { taskId, event } of matches) {
      const wait = waits.find((candidate) => candidate.taskId === taskId);
      const outputJson = state.eventOutputJson(taskId, event.payload);
      // A payload the step's schema (changed since the send) refuses does not match it.
      if (wait === undefined || outputJson === null) continue;
      state.apply(
        {
          taskId,
          workflowId: wait.workflowId,
          event: { type: 'event_received', actor: parseActor(event.sentBy), eventId: event.id },
          extra: { outputJson },
        },
        undefined,
      );
    }
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
