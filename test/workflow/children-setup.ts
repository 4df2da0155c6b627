/**
 * A new run of the children model (children-model.ts): the submit, checked against what the
 * contract says each step becomes (the edge table, R44, R58), with the first map steps the engine starts in
 * the same transaction.
 */
import { createWorkflowRun, type TaskState } from '@causeway/workflow/internal';
import { specAllowsEdge, specParentState } from '../helpers/contract-tables';
import {
  buildChildrenDefinition,
  type ChildrenStepSpec,
  type ChildrenWorkflowSpec,
} from './children-arbitraries';
import {
  acceptedAtMs,
  type ChildrenModel,
  type ChildrenReal,
  checkSettled,
  describeRow,
  expectEdge,
  invariant,
  listCheck,
  sendEvent,
  stepSpecOf,
  taskIdOf,
} from './children-model';

/** Where each step's creation edge takes it: no creation edge leads to awaiting_children. */
function createdState(stepSpec: ChildrenStepSpec): TaskState {
  return stepSpec.after.length > 0 || stepSpec.kind === 'map' ? 'pending' : 'queued';
}

export function setupChildren(spec: ChildrenWorkflowSpec): {
  model: ChildrenModel;
  real: ChildrenReal;
} {
  const definition = buildChildrenDefinition(spec);
  const created = createWorkflowRun(
    definition,
    { workflowId: 'wf-1', taskIds: definition.steps.map((step) => taskIdOf(step.name)) },
    new Date(acceptedAtMs),
    0,
    listCheck(spec),
  );
  const model: ChildrenModel = {
    spec,
    definition,
    log: [],
    states: new Map(),
    leased: new Set(),
    children: new Map(),
    parent: 'queued',
  };
  const [workflowRow, ...taskRows] = created.transitions;
  invariant(workflowRow?.kind === 'workflow', () => 'the workflow row comes first at creation');
  model.log.push(workflowRow);
  model.parent = workflowRow.to;
  for (const row of taskRows) {
    const expected = row.kind === 'task' && createdState(stepSpecOf(model, row.taskId));
    invariant(
      row.kind === 'task' &&
        row.edge.from === null &&
        row.edge.to === expected &&
        specAllowsEdge(null, row.edge.to, row.edge.reason, 'client'),
      () => `creation: ${describeRow(row)}, expected ∅ → ${expected} (submitted)`,
    );
    model.log.push(row);
    model.states.set(row.taskId, row.edge.to);
  }
  invariant(
    workflowRow.to === specParentState([...model.states.values()]),
    () => `a new workflow is ${workflowRow.to}`,
  );
  const real: ChildrenReal = { run: created.run, nowMs: acceptedAtMs };
  // R44, R58: in the submit's transaction the engine starts every first map step (its upstream
  // steps, none, have succeeded): one child per element, or dead when its list fails. Its
  // children are counted at once (an empty list succeeds).
  for (const stepSpec of spec.steps) {
    if (stepSpec.kind !== 'map' || stepSpec.after.length > 0) continue;
    // One promotion starts the others too, as follow-ups.
    if (model.states.get(taskIdOf(stepSpec.name)) !== 'pending') continue;
    const outcome = sendEvent(model, real, taskIdOf(stepSpec.name), { type: 'promote' });
    if (stepSpec.listFails) expectEdge(outcome, 'dead', 'step_input_failed');
    else expectEdge(outcome, 'awaiting_children', 'children_started');
  }
  checkSettled(model, real);
  return { model, real };
}
