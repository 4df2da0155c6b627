import {
  eventOutputJson,
  getStep,
  type PlannedTransition,
  parseActor,
  type WorkflowDefinition,
  type WorkflowStep,
} from '@causeway/workflow';
import type { Transaction } from 'kysely';
import { eventFindFirstMatches, eventKeysLock } from '../../db/events/event-queries';
import type { CausewayDatabase } from '../../db/schema';
import type { NewTransitionRow } from '../../db/transition-row';
import { applyEvents } from '../decision/apply-events';
import type { ApplyContext, EventRequest } from '../decision/event-request';
import { type WaitEvent, waitDetail, waitEventOf } from '../decision/wait-event';

/** A first step of a submitted workflow that waits for an event (R37). */
export interface SubmittedWait {
  readonly taskId: string;
  readonly workflowId: string;
  readonly workflowName: string;
  readonly step: string;
  readonly name: string;
  readonly key: string;
}

/** The event a first step waits for: its key from the input alone (it has no upstream). */
export function rootWaitEvent(
  item: { readonly definition: WorkflowDefinition; readonly input: unknown },
  step: WorkflowStep,
  workflowId: string,
): WaitEvent {
  return waitEventOf(item.definition, step, { id: workflowId, input: item.input }, []);
}

/**
 * A creation edge into `waiting` says what it waits for; its timeout counts from acceptance,
 * which only the database knows, so the detail gives it as a duration.
 */
export function waitLogged(
  logged: NewTransitionRow,
  row: PlannedTransition,
  waits: ReadonlyMap<string, { readonly event: WaitEvent; readonly timeoutMs: number }>,
): NewTransitionRow {
  const wait = row.kind === 'task' ? waits.get(row.taskId) : undefined;
  if (wait === undefined) return logged;
  return {
    ...logged,
    detail: { ...logged.detail, ...waitDetail(wait.event, { inMs: wait.timeoutMs }) },
  };
}

/**
 * Completes first steps that wait for an event stored before their workflow's insert
 * committed (R37), in the submit's transaction and under the (name, key) locks a send takes.
 */
export async function completeSubmittedWaits(
  tx: Transaction<CausewayDatabase>,
  apply: ApplyContext,
  waits: readonly SubmittedWait[],
): Promise<void> {
  if (waits.length === 0) return;
  await eventKeysLock(tx, waits);
  const matches = await eventFindFirstMatches(tx, waits);
  const requests: EventRequest[] = [];
  for (const { taskId, event } of matches) {
    const wait = waits.find((candidate) => candidate.taskId === taskId);
    const definition = wait === undefined ? undefined : apply.definitions.get(wait.workflowName);
    if (wait === undefined || definition === undefined) continue;
    const outputJson = eventOutputJson(getStep(definition, wait.step), event.payload);
    if (outputJson === null) continue;
    requests.push({
      taskId,
      workflowId: wait.workflowId,
      event: { type: 'event_received', actor: parseActor(event.sentBy), eventId: event.id },
      extra: { outputJson },
    });
  }
  if (requests.length > 0) await applyEvents(tx, apply, requests);
}
