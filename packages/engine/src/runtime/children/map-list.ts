import {
  classifyError,
  type MapContext,
  type StepInputProblem,
  type WorkflowDefinition,
  type WorkflowRegistry,
  type WorkflowStep,
} from '@causeway/workflow/internal';
import type { TaskRecord, WorkflowRecord } from '../../db/rows';
import { upstreamResults } from '../decision/wait-event';
import { admitChildren, type ChildStart } from './child-admission';

export type MapStartOrProblem =
  | { readonly ok: true; readonly start: ChildStart }
  | { readonly ok: false; readonly problem: StepInputProblem };

/**
 * The children a map step starts now (R44): its list from `over` with the workflow's input and
 * the outputs of its upstream steps as this decision leaves them, each element's input, and
 * their admission (R34). A function that throws, a list that is not an array, or a child that
 * fails admission is a problem for the machine, which ends the step (`step_input_failed`, R58)
 * with nothing written for the children.
 */
export function mapStartOf(
  definitions: WorkflowRegistry,
  definition: WorkflowDefinition,
  step: WorkflowStep,
  parent: { readonly workflow: WorkflowRecord; readonly task: TaskRecord },
  tasks: Iterable<TaskRecord>,
  now: Date,
  override?: { readonly taskId: string; readonly output: unknown },
): MapStartOrProblem {
  const map = step.map;
  if (map === undefined) {
    throw new Error(`step "${step.name}" of "${definition.name}" is not a map step`);
  }
  const results = upstreamResults(definition, step.name, parent.workflow.id, tasks, override);
  const context: MapContext = {
    workflowId: parent.workflow.id,
    input: parent.workflow.input,
    results,
  };
  let list: unknown;
  try {
    list = map.over(context);
  } catch (error) {
    return problem('list', `over threw: ${classifyError(error).summary}`, error);
  }
  if (!Array.isArray(list)) {
    return problem(
      'list',
      `over must return an array, got ${list === null ? 'null' : typeof list}`,
      null,
    );
  }
  const inputs: unknown[] = [];
  for (const [index, element] of list.entries()) {
    if (map.input === null) {
      inputs.push(element);
      continue;
    }
    try {
      inputs.push(map.input(element, index, context));
    } catch (error) {
      return problem(
        'child_input',
        `input threw for element ${index}: ${classifyError(error).summary}`,
        error,
      );
    }
  }
  const admitted = admitChildren(
    definitions,
    {
      workflow: map.workflow,
      inputs,
      tolerate: map.tolerate,
      single: false,
      detached: false,
      maxChildren: map.maxChildren,
    },
    parent,
    now,
  );
  if (!admitted.ok) return problem('child_input', admitted.summary, null);
  return { ok: true, start: { ...admitted.start, parentTrace: true } };
}

function problem(
  input: StepInputProblem['input'],
  summary: string,
  error: unknown,
): MapStartOrProblem {
  const category = error === null ? 'invalid_argument' : classifyError(error).category;
  return { ok: false, problem: { input, category, summary } };
}
