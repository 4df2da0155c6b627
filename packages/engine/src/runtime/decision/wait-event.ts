import {
  classifyError,
  eventKeyProblem,
  type StepInputProblem,
  type WorkflowDefinition,
  type WorkflowStep,
} from '@causeway/workflow/internal';
import type { TaskRecord, WorkflowRecord } from '../../db/rows';
import { upstreamSteps } from '../step-table';

/** The event a wait starts waiting for (R37). */
export interface WaitEvent {
  readonly name: string;
  readonly key: string;
}

/** The event a step would wait for, or what its key function gave wrong (R58). */
export type WaitEventOrProblem =
  | { readonly ok: true; readonly event: WaitEvent }
  | { readonly ok: false; readonly problem: StepInputProblem };

/**
 * The event a step that starts waiting now waits for: its name, and its key computed from the
 * workflow's input and the outputs of its upstream steps as they are in this decision
 * (`results`: the tasks' outputs, with `override` for a result this decision writes). A key
 * function that throws or gives no valid key is a problem for the machine, which ends the step
 * (`step_input_failed`) instead of parking a wait no event can match.
 */
export function waitEventOf(
  definition: WorkflowDefinition,
  step: WorkflowStep,
  workflow: Pick<WorkflowRecord, 'id' | 'input'>,
  tasks: Iterable<TaskRecord>,
  override?: { readonly taskId: string; readonly output: unknown },
): WaitEventOrProblem {
  const wait = step.event;
  if (wait === undefined) {
    throw new Error(`step "${step.name}" of "${definition.name}" is not an event step`);
  }
  const results = upstreamResults(definition, step.name, workflow.id, tasks, override);
  let key: unknown;
  try {
    key = wait.key({ input: workflow.input, results });
  } catch (error) {
    const classified = classifyError(error);
    return {
      ok: false,
      problem: {
        input: 'event_key',
        category: classified.category,
        summary: `the key function threw: ${classified.summary}`,
      },
    };
  }
  const problem = eventKeyProblem(key);
  if (problem !== null) {
    return {
      ok: false,
      problem: { input: 'event_key', category: 'invalid_argument', summary: problem },
    };
  }
  return { ok: true, event: { name: wait.name, key: key as string } };
}

/**
 * The outputs of a step's upstream steps (direct or not) as a decision leaves them: the tasks'
 * stored outputs, with `override` for a result the decision itself writes.
 */
export function upstreamResults(
  definition: WorkflowDefinition,
  stepName: string,
  workflowId: string,
  tasks: Iterable<TaskRecord>,
  override?: { readonly taskId: string; readonly output: unknown },
): Record<string, unknown> {
  const upstream = upstreamSteps(definition, stepName);
  const results: Record<string, unknown> = {};
  for (const task of tasks) {
    if (task.workflowId !== workflowId || !upstream.has(task.step)) continue;
    results[task.step] = task.id === override?.taskId ? override.output : task.output;
  }
  return results;
}

/** What the log says of a wait an edge starts (R42): the event, its key, when it gives up. */
export function waitDetail(
  event: WaitEvent,
  timeout: { readonly at: Date | null } | { readonly inMs: number },
): Readonly<Record<string, unknown>> {
  return {
    eventName: event.name,
    eventKey: event.key,
    ...('inMs' in timeout
      ? { timeoutMs: timeout.inMs }
      : timeout.at === null
        ? {}
        : { timeoutAt: timeout.at.toISOString() }),
  };
}
