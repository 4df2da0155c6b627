import type { z } from 'zod';
import type { StepDefinition, WorkflowDefinition } from './workflow-definition';

/**
 * The child workflow of `map({ run })` (R44): one step that runs the given function. It is
 * named `<parent>/<step>`, which only `defineWorkflow` knows, so `map` makes it without a name
 * and `defineWorkflow` names it (`namedMapChild`). Such derived names are the only workflow
 * names with a "/": a name a user gives never has one, so no two workflows can share one.
 */
const unnamedChildren = new WeakSet<WorkflowDefinition>();
const namedChildren = new WeakSet<WorkflowDefinition>();

/** A one-step child definition waiting for its parent's name. */
export function unnamedOneStepChild(input: z.ZodType, step: StepDefinition): WorkflowDefinition {
  const child: WorkflowDefinition = Object.freeze({
    name: '',
    input,
    idempotencyKey: null,
    debounce: null,
    deadlineMs: null,
    steps: Object.freeze([Object.freeze({ ...step, name: '', downstream: Object.freeze([]) })]),
  });
  unnamedChildren.add(child);
  return child;
}

/**
 * The step `name` of workflow `parent` as the definition holds it: a map step whose child is
 * one step gets that child named `<parent>/<name>`, its step named `name`, with the parent's
 * version (R54: two versions of a parent have children of their own, whose `run` may differ
 * while their shape does not); any other step is returned as it is.
 */
export function namedMapChild(
  definition: StepDefinition,
  parent: string,
  name: string,
  version: string,
): StepDefinition {
  const spec = definition.map;
  if (spec === undefined || !unnamedChildren.has(spec.workflow)) return definition;
  const steps = spec.workflow.steps.map((step) => Object.freeze({ ...step, name }));
  const workflow = Object.freeze({
    ...spec.workflow,
    name: `${parent}/${name}`,
    version,
    steps: Object.freeze(steps),
  });
  namedChildren.add(workflow);
  return Object.freeze({ ...definition, map: Object.freeze({ ...spec, workflow }) });
}

/** Whether `definition` is the one-step child of a map step (`map({ run })`), once named. */
export function isOneStepChild(definition: WorkflowDefinition): boolean {
  return namedChildren.has(definition);
}
