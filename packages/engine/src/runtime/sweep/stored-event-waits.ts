import {
  eventOutputJson,
  eventWaitingState,
  parseActor,
  type TaskEvent,
  type WorkflowRegistry,
} from '@causeway/workflow/internal';
import type { WaitWithStoredEvent } from '../../db/sweep/waits-with-stored-events';
import type { EventRequest } from '../decision/event-request';

/**
 * The `event_received` requests of waits an engine that lacked their workflow left behind when
 * it stored their event (R54): each wait takes the first of its listed events whose payload its
 * step accepts, as a wait that starts takes a stored event (R37). Built like the send's own
 * requests: the sender is the edge's actor, its reason goes on the edge, the payload is the
 * output. A wait with no acceptable event is left as it is.
 */
export function storedEventWaitRequests(
  definitions: WorkflowRegistry,
  listed: readonly WaitWithStoredEvent[],
): EventRequest[] {
  const requests: EventRequest[] = [];
  const decided = new Set<string>();
  for (const wait of listed) {
    if (decided.has(wait.taskId)) continue;
    const step = definitions
      .at(wait.workflowName, wait.workflowVersion)
      ?.steps.find((candidate) => candidate.name === wait.step);
    if (step === undefined) continue;
    const outputJson = eventOutputJson(step, wait.event.payload);
    if (outputJson === null) continue;
    decided.add(wait.taskId);
    const { id, name, key, sentBy, reason } = wait.event;
    requests.push({
      taskId: wait.taskId,
      workflowId: wait.workflowId,
      event: {
        type: 'event_received',
        actor: parseActor(sentBy),
        eventId: id,
        ...(reason === null ? {} : { reason }),
      } satisfies TaskEvent,
      // Still the wait that was listed once its workflow is locked: a live send may have
      // completed it meanwhile, and then the sweep writes nothing for it.
      precondition: (task) =>
        task.state === eventWaitingState && task.eventName === name && task.eventKey === key,
      extra: { outputJson },
    });
  }
  return requests;
}
