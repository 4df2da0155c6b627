import {
  eventOutputJson,
  type PlannedTransition,
  type WorkflowDefinition,
  type WorkflowStep,
} from '@causeway/workflow/internal';
import type { Transaction } from 'kysely';
import type { CausewayDatabase } from '../../db/schema';
import type { NewTransitionRow } from '../../db/transition-row';
import { applyEvents } from '../decision/apply-events';
import type { ApplyContext } from '../decision/event-request';
import { storedEventRequests } from '../decision/stored-events';
import {
  type WaitEvent,
  type WaitEventOrProblem,
  waitDetail,
  waitEventOf,
} from '../decision/wait-event';
import { noteStoredEventWaits } from '../tracing/committed-wait-spans';
import type { SubmittedWait } from './submission-plan';

/**
 * The event a first step waits for: its key from the input alone (it has no upstream); or what
 * the key function gave wrong, which ends the step at once (R58).
 */
export function rootWaitEvent(
  item: { readonly definition: WorkflowDefinition; readonly input: unknown },
  step: WorkflowStep,
  workflowId: string,
): WaitEventOrProblem {
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
 * committed (R37), in the submit's transaction (`storedEventRequests`).
 */
export async function completeSubmittedWaits(
  tx: Transaction<CausewayDatabase>,
  apply: ApplyContext,
  waits: readonly SubmittedWait[],
): Promise<void> {
  const stepOf = new Map(
    waits.map((wait) => [
      wait.taskId,
      apply.definitions
        .at(wait.workflowName, wait.workflowVersion)
        ?.steps.find((step) => step.name === wait.step),
    ]),
  );
  const requests = await storedEventRequests(tx, waits, (taskId, payload) => {
    const step = stepOf.get(taskId);
    return step === undefined ? null : eventOutputJson(step, payload);
  });
  if (requests.length === 0) return;
  const result = await applyEvents(tx, apply, requests);
  noteStoredEventWaits(tx, requests, result.outcomes);
}
