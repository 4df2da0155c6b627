import type { WorkflowDefinition } from './define-workflow';

/** The steps nothing runs after: a workflow's result comes from them (R45). */
export function sinkSteps(definition: WorkflowDefinition): readonly string[] {
  return definition.steps.filter((step) => step.downstream.length === 0).map((step) => step.name);
}

/**
 * A succeeded workflow's result (R45): the output of its only sink step, or an object of its
 * sink steps' outputs by step name. `outputOf` gives a step's stored output.
 */
export function workflowResultOf(
  definition: WorkflowDefinition,
  outputOf: (step: string) => unknown,
): unknown {
  const sinks = sinkSteps(definition);
  if (sinks.length === 1) return outputOf(sinks[0] as string);
  return Object.fromEntries(sinks.map((step) => [step, outputOf(step)]));
}
