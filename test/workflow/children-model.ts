/**
 * The model of the children property test (children-machine.property.test.ts): a workflow run
 * driven only through the reducer (`applyTaskEvent`, `cancelWorkflowRun`), and the test's own
 * record of it, written from the contract (docs/rules.md, docs/state-machine.md), never from packages/workflow/src:
 *   - the log of every row, each task's state replayed from it (R25), the parent's state;
 *   - each parent step's child workflows, one outcome per child in input order (open,
 *     succeeded, or failed: dead or cancelled), and its tolerance (R45), which decide the step
 *     as children-contract.ts says (R45, R46).
 * Every row is checked against the hand-written edge table (test/helpers/contract-tables.ts)
 * and the code's, every follow-up against promotion and the cancel cascade, and after every
 * command the run against the log and the aggregation table by both implementations.
 */
import {
  type Actor,
  aggregateWorkflowState,
  applyTaskEvent,
  isAllowedEdge,
  type PlannedTransition,
  type ReasonCode,
  type RefusalCode,
  type RunTask,
  type StepInputCheck,
  type StepInputProblem,
  type TaskEvent,
  type TaskSnapshot,
  type TaskState,
  type WorkflowDefinition,
  type WorkflowRun,
  type WorkflowState,
} from '@causeway/workflow/internal';
import {
  specActorKind,
  specAllowsEdge,
  specParentState,
  specTerminalStates,
} from '../helpers/contract-tables';
import {
  type ChildrenStepSpec,
  type ChildrenWorkflowSpec,
  listBugMessage,
} from './children-arbitraries';
import {
  type ChildOutcome,
  type ParentChildren,
  specChildrenVerdict,
  tallyOf,
} from './children-contract';

export interface ChildrenModel {
  readonly spec: ChildrenWorkflowSpec;
  readonly definition: WorkflowDefinition;
  /** Every row ever emitted, in order (R24). */
  readonly log: PlannedTransition[];
  /** Each task's state: the `to` of its last row (R25). */
  readonly states: Map<string, TaskState>;
  /**
   * Tasks whose lease a worker holds: `leased`, and `cancel_requested` entered from `leased`.
   * The engine fences every worker event on the lease (R7), so only these receive them.
   */
  readonly leased: Set<string>;
  /** The child workflows each step started, kept after it settles for a replay (R47). */
  readonly children: Map<string, ParentChildren>;
  parent: WorkflowState;
}

export interface ChildrenReal {
  run: WorkflowRun;
  /** Simulated database clock (R11); only moves forward. */
  nowMs: number;
}

export const acceptedAtMs = Date.UTC(2030, 0, 1, 9, 0, 0);

export const taskIdOf = (name: string) => `task-${name}`;

export function stepSpecOf(model: ChildrenModel, taskId: string): ChildrenStepSpec {
  const found = model.spec.steps.find((stepSpec) => taskIdOf(stepSpec.name) === taskId);
  if (found === undefined) throw new Error(`no step spec for ${taskId}`);
  return found;
}

export function invariant(condition: unknown, message: () => string): asserts condition {
  if (!condition) throw new Error(message());
}

export function describeRow(row: PlannedTransition): string {
  if (row.kind === 'workflow') return `workflow ${row.from} → ${row.to} (${row.reason})`;
  const { edge } = row;
  return `${row.step}: ${edge.from} → ${edge.to} (${edge.reason}) by ${edge.actor}`;
}

/** A step that awaits its children: `awaiting_children`, or asked to cancel while it did. */
export function awaitsChildren(model: ChildrenModel, taskId: string): boolean {
  const state = model.states.get(taskId);
  return (
    model.children.has(taskId) &&
    (state === 'awaiting_children' || (state === 'cancel_requested' && !model.leased.has(taskId)))
  );
}

/** What the engine reports of a map step whose `over` throws (R58). */
export const listProblem: StepInputProblem = {
  input: 'list',
  category: 'unknown',
  summary: listBugMessage,
};

/** R58, as the engine reports it: a map step whose `over` throws has a problem. */
export function listCheck(spec: ChildrenWorkflowSpec): StepInputCheck {
  return (task: RunTask) => {
    const stepSpec = spec.steps.find((candidate) => candidate.name === task.step);
    return stepSpec?.kind === 'map' && stepSpec.listFails ? listProblem : null;
  };
}

// =============================================================================================
// Driving the reducer

export type Outcome =
  | {
      readonly ok: true;
      readonly before: TaskSnapshot;
      readonly to: TaskState;
      readonly reason: ReasonCode;
      readonly actor: string;
      readonly errorCategory: string | null;
    }
  | { readonly ok: false; readonly before: TaskSnapshot; readonly code: RefusalCode };

export function expectEdge(outcome: Outcome, to: TaskState, reason: ReasonCode): void {
  invariant(
    outcome.ok && outcome.to === to && outcome.reason === reason,
    () =>
      `from ${outcome.before.state} expected → ${to} (${reason}), got ${
        outcome.ok ? `→ ${outcome.to} (${outcome.reason})` : `refusal ${outcome.code}`
      }`,
  );
}

export function expectRefused(outcome: Outcome, code?: RefusalCode): void {
  invariant(
    !outcome.ok && (code === undefined || outcome.code === code),
    () =>
      `from ${outcome.before.state} expected a refusal${code ? ` (${code})` : ''}, got ${
        outcome.ok ? `→ ${outcome.to} (${outcome.reason})` : outcome.code
      }`,
  );
}

export function snapshotIn(run: WorkflowRun, taskId: string): TaskSnapshot {
  const task = run.tasks.find((candidate) => candidate.taskId === taskId);
  if (task === undefined) throw new Error(`task ${taskId} disappeared from the run`);
  return task.snapshot;
}

/** One event to one task, every row it emitted checked and absorbed. */
export function sendEvent(
  model: ChildrenModel,
  real: ChildrenReal,
  taskId: string,
  event: TaskEvent,
): Outcome {
  const { run } = real;
  const before = snapshotIn(run, taskId);
  const printed = JSON.stringify(run);
  // The engine tells the reducer what only it knows: whether the step started children (R47).
  const decision = applyTaskEvent(
    model.definition,
    run,
    taskId,
    event,
    { now: new Date(real.nowMs), random: () => 0.5 },
    listCheck(model.spec),
    { hasChildren: model.children.has(taskId) },
  );
  invariant(
    JSON.stringify(run) === printed,
    () => `applyTaskEvent(${event.type}) mutated its input`,
  );
  if (!decision.ok) {
    invariant(
      decision.refusal.state === before.state,
      () => `refusal reports ${decision.refusal.state} for a ${before.state} task`,
    );
    return { ok: false, before, code: decision.refusal.code };
  }
  absorb(model, real, decision.run, decision.transitions, taskId);
  const [first] = decision.transitions;
  invariant(first?.kind === 'task' && first.taskId === taskId, () => 'the target is not first');
  // A map step promoted by this event started its children: the engine counts them (R44: an
  // empty list succeeds at once).
  for (const row of decision.transitions) {
    if (row.kind === 'task' && row.edge.from === 'pending' && row.edge.to === 'awaiting_children') {
      countChildren(model, real, row.taskId);
    }
  }
  const { to, reason, actor, errorCategory } = first.edge;
  return { ok: true, before, to, reason, actor, errorCategory };
}

/**
 * Checks the rows of one reducer call in order and appends them to the model. `target` is the
 * task the event was sent to (its row comes first); null for a workflow cancel.
 */
export function absorb(
  model: ChildrenModel,
  real: ChildrenReal,
  after: WorkflowRun,
  rows: readonly PlannedTransition[],
  target: string | null,
): void {
  const before = real.run;
  const touched = new Set<string>();
  rows.forEach((row, position) => {
    if (row.kind === 'workflow') {
      invariant(position === rows.length - 1, () => 'the workflow row comes last');
      const children = [...model.states.values()];
      const expected = specParentState(children);
      invariant(
        row.from === model.parent &&
          row.to === expected &&
          row.to === aggregateWorkflowState(children) &&
          row.to !== row.from,
        () => `${describeRow(row)}: children ${children} aggregate to ${expected}`,
      );
      model.log.push(row);
      model.parent = row.to;
      return;
    }
    invariant(!touched.has(row.taskId), () => `${row.step} got two edges in one command`);
    touched.add(row.taskId);
    checkRow(model, row, target !== null && position > 0);
    model.log.push(row);
    model.states.set(row.taskId, row.edge.to);
    noteEdge(model, row.taskId, row.edge.from, row.edge.to);
  });
  if (!rows.some((row) => row.kind === 'workflow')) {
    const expected = specParentState([...model.states.values()]);
    invariant(expected === model.parent, () => `the parent became ${expected} without a row`);
  }
  for (const task of after.tasks) {
    if (touched.has(task.taskId)) continue;
    invariant(
      JSON.stringify(task.snapshot) === JSON.stringify(snapshotIn(before, task.taskId)),
      () => `${task.step} changed without an edge`,
    );
  }
  real.run = after;
}

/** R25 chain, the edge table (hand-written and the code's), and what a follow-up may be. */
function checkRow(
  model: ChildrenModel,
  row: Extract<PlannedTransition, { kind: 'task' }>,
  followUp: boolean,
): void {
  const { edge } = row;
  const what = () => describeRow(row);
  invariant(
    edge.from === model.states.get(row.taskId),
    () => `${what()} but the log says ${model.states.get(row.taskId)}`,
  );
  const actor = specActorKind(edge.actor);
  invariant(
    specAllowsEdge(edge.from, edge.to, edge.reason, actor),
    () => `${what()}: not in the edge table`,
  );
  invariant(isAllowedEdge(edge.from, edge.to, edge.reason, actor), () => `${what()}: not in code`);
  const stepSpec = stepSpecOf(model, row.taskId);
  // A map step runs no code (R44): no worker ever holds it.
  invariant(
    stepSpec.kind !== 'map' || (edge.to !== 'queued' && edge.to !== 'leased'),
    () => `${what()} for a map step`,
  );
  if (edge.from !== null && specTerminalStates.includes(edge.from)) {
    invariant(edge.from === 'dead' && actor === 'operator', () => `terminal left by ${what()}`);
  }
  if (edge.to === 'dead') invariant(edge.errorCategory !== null, () => `${what()}: no category`);
  if (!followUp) return;
  // What the reducer does on its own: promote a step whose upstream all succeeded, or cancel
  // one behind a cancelled (or stopping) upstream step.
  const upstream = stepSpec.after.map((name) => model.states.get(taskIdOf(name)));
  const promoted =
    upstream.every((state) => state === 'succeeded') &&
    edge.actor === 'system' &&
    (stepSpec.kind === 'code'
      ? edge.to === 'queued' && edge.reason === 'upstream_succeeded'
      : stepSpec.listFails
        ? edge.to === 'dead' && edge.reason === 'step_input_failed'
        : edge.to === 'awaiting_children' && edge.reason === 'children_started');
  const cascaded =
    edge.to === 'cancelled' &&
    edge.reason === 'cancelled_before_start' &&
    upstream.some((state) => state === 'cancelled' || state === 'cancel_requested');
  invariant(edge.from === 'pending' && (promoted || cascaded), () => `follow-up ${what()}`);
}

/**
 * What an edge does to the model's lease and children. A map step's promotion starts one child
 * per element (R44); a replay runs the failed children again and keeps the succeeded ones
 * (R47). The children of `leased → awaiting_children` are the command's (`startChildren`).
 */
function noteEdge(model: ChildrenModel, taskId: string, from: TaskState | null, to: TaskState) {
  if (to === 'leased' || (to === 'cancel_requested' && from === 'leased')) model.leased.add(taskId);
  else model.leased.delete(taskId);
  if (to !== 'awaiting_children' || from === 'leased') return;
  const stepSpec = stepSpecOf(model, taskId);
  const kept = model.children.get(taskId);
  if (kept !== undefined) {
    const outcomes = kept.outcomes.map((outcome) => (outcome === 'succeeded' ? outcome : 'open'));
    model.children.set(taskId, { ...kept, outcomes });
  } else if (stepSpec.kind === 'map') {
    const outcomes = Array.from({ length: stepSpec.listLength }, (): ChildOutcome => 'open');
    model.children.set(taskId, { outcomes, allowedFailures: stepSpec.allowedFailures });
  }
}

/** R25 for every task, and the parent: the aggregation table by both implementations. */
export function checkRun(model: ChildrenModel, real: ChildrenReal): void {
  const children = [...model.states.values()];
  for (const task of real.run.tasks) {
    const state = model.states.get(task.taskId);
    invariant(task.snapshot.state === state, () => `${task.step}: the log says ${state}`);
    if (state === 'pending') {
      const upstream = stepSpecOf(model, task.taskId).after.map((name) =>
        model.states.get(taskIdOf(name)),
      );
      invariant(
        !upstream.every((up) => up === 'succeeded') &&
          !upstream.some((up) => up === 'cancelled' || up === 'cancel_requested'),
        () => `${task.step} pending behind ${upstream}`,
      );
    }
    if (state === 'awaiting_children') {
      invariant(model.children.has(task.taskId), () => `${task.step} awaits no children`);
    }
  }
  const expected = specParentState(children);
  invariant(
    aggregateWorkflowState(children) === expected &&
      real.run.state === expected &&
      model.parent === expected,
    () => `parent ${real.run.state} (log ${model.parent}), children ${children} → ${expected}`,
  );
}

/**
 * The engine counts a step's children whenever one of them ends, and when the step starts or
 * resumes waiting for them; the count decides the step exactly when R45 and R46 say, by an
 * actor the edge table allows. Any other state refuses the count.
 */
export function countChildren(
  model: ChildrenModel,
  real: ChildrenReal,
  taskId: string,
  actor: Actor = { kind: 'system' },
) {
  const children = model.children.get(taskId);
  if (children === undefined) return;
  const awaiting = awaitsChildren(model, taskId);
  const state = model.states.get(taskId) ?? null;
  const tally = tallyOf(children);
  const outcome = sendEvent(model, real, taskId, { type: 'children_changed', actor, tally });
  if (!awaiting) return expectRefused(outcome);
  const verdict = specChildrenVerdict(children, state === 'cancel_requested');
  if (verdict === null) return expectRefused(outcome, 'children_pending');
  if (!specAllowsEdge(state, verdict.to, verdict.reason, actor.kind)) {
    return expectRefused(outcome, 'actor_not_allowed');
  }
  expectEdge(outcome, verdict.to, verdict.reason);
}

/** After every command: no step still awaits children that decided it (R45, R46). */
export function checkSettled(model: ChildrenModel, real: ChildrenReal): void {
  checkRun(model, real);
  for (const [taskId, children] of model.children) {
    if (!awaitsChildren(model, taskId)) continue;
    const verdict = specChildrenVerdict(children, model.states.get(taskId) === 'cancel_requested');
    invariant(verdict === null, () => `${taskId} still awaits children that decided it`);
  }
}
