import {
  classifyError,
  eventKeyProblem,
  type WorkflowDefinition,
  type WorkflowStep,
} from '@causeway/workflow/internal';
import type { TaskRecord, WorkflowRecord } from '../../db/rows';
import { upstreamSteps } from '../step-table';

/** The event a wait starts waiting for (R37). */
export interface WaitEvent {
  readonly name: string;
  /** Null when the step's key function threw or gave no valid key (`keyError` says why). */
  readonly key: string | null;
  readonly keyError?: string;
}

/**
 * The event a step that starts waiting now waits for: its name, and its key computed from the
 * workflow's input and the outputs of its upstream steps as they are in this decision. A key
 * function that throws does not stop the decision: the wait starts with no key (no event can
 * match it; it ends by its timeout, the deadline or a cancel) and the edge says why.
 */
export function waitEventOf(
  definition: WorkflowDefinition,
  step: WorkflowStep,
  workflow: Pick<WorkflowRecord, 'id' | 'input'>,
  tasks: Iterable<TaskRecord>,
): WaitEvent {
  const wait = step.event;
  if (wait === undefined) {
    throw new Error(`step "${step.name}" of "${definition.name}" is not an event step`);
  }
  const upstream = upstreamSteps(definition, step.name);
  const results: Record<string, unknown> = {};
  for (const task of tasks) {
    if (task.workflowId === workflow.id && upstream.has(task.step))
      results[task.step] = task.output;
  }
  let key: unknown;
  try {
    key = wait.key({ input: workflow.input, results });
  } catch (error) {
    return {
      name: wait.name,
      key: null,
      keyError: `the key function threw: ${classifyError(error).summary}`,
    };
  }
  const problem = eventKeyProblem(key);
  if (problem !== null) return { name: wait.name, key: null, keyError: problem };
  return { name: wait.name, key: key as string };
}

/** What the log says of a wait an edge starts (R42): the event, its key, when it gives up. */
export function waitDetail(
  event: WaitEvent,
  timeout: { readonly at: Date | null } | { readonly inMs: number },
): Readonly<Record<string, unknown>> {
  return {
    eventName: event.name,
    ...(event.key === null ? { keyError: event.keyError } : { eventKey: event.key }),
    ...('inMs' in timeout
      ? { timeoutMs: timeout.inMs }
      : timeout.at === null
        ? {}
        : { timeoutAt: timeout.at.toISOString() }),
  };
}
