import type { Actor } from './actors';
import { aggregateWorkflowState } from './aggregate';
import type { WorkflowDefinition } from './define-workflow';
import { edgeRuleOf } from './edge-lookup';
import { failedRootEdge } from './failed-root';
import type { DecideInput, Refusal } from './machine-choice';
import type { ReasonCode, TaskState, WorkflowState } from './machine-table';
import { cancelCascadeRule, promotionRule } from './machine-table';
import type { RetryPolicy } from './retry-policy';
import type { StepInputProblem } from './step-input';
import type { TaskEvent } from './task-events';
import { decideTaskEdge, type TaskEdge } from './task-machine';
import { nextSnapshot, type TaskSnapshot } from './task-snapshot';

/** A workflow's tasks as the pure machine sees them. */
export interface RunTask {
  readonly taskId: string;
  readonly step: string;
  readonly snapshot: TaskSnapshot;
}

export interface WorkflowRun {
  readonly workflowId: string;
  readonly state: WorkflowState;
  readonly tasks: readonly RunTask[];
}

/** A planned row of the transition log. */
export type PlannedTransition =
  | {
      readonly kind: 'task';
      readonly taskId: string;
      readonly step: string;
      readonly edge: TaskEdge;
    }
  | {
      readonly kind: 'workflow';
      readonly from: WorkflowState | null;
      readonly to: WorkflowState;
      /** The reason of the child edge that changed the parent (`submitted` at creation). */
      readonly reason: ReasonCode;
      /** The step whose edge changed the parent; null at creation. */
      readonly step: string | null;
      readonly actor: string;
    };

export type RunDecision =
  | {
      readonly ok: true;
      readonly run: WorkflowRun;
      readonly transitions: readonly PlannedTransition[];
    }
  | { readonly ok: false; readonly refusal: Refusal };

export interface RunClock {
  readonly now: Date;
  readonly random: () => number;
}

/**
 * Evaluates, for a task about to start waiting (a promotion, a replay, a first step at
 * submit), the step's event key with the data the engine has, and says what went wrong, or
 * null (R58). Only the engine has the workflow's input and the upstream outputs, so the
 * machine asks it.
 */
export type StepInputCheck = (task: RunTask) => StepInputProblem | null;

/**
 * A step whose start the engine must evaluate a function for (R58): an event step's key, a map
 * step's list and its children's inputs.
 */
function evaluatesInput(policy: RetryPolicy): boolean {
  return policy.wait !== null || policy.map;
}

/** What a decision about `task` needs to know of its step's input: asked only before a wait. */
function inputProblemOf(
  task: RunTask,
  startsWait: boolean,
  check: StepInputCheck | undefined,
): Pick<DecideInput, 'inputProblem'> {
  return startsWait && check !== undefined ? { inputProblem: check(task) } : {};
}

/**
 * A new workflow: roots `queued` (an event step `waiting`), the rest `pending`, each with its
 * `submitted` edge, and the
 * workflow's own creation edge. Deadlines count from acceptance (`now`); a root runs after
 * `delayMs` plus its own step delay (R36), and its edge's detail says how long. A root event
 * step whose key fails (`checkInput`, R58) is created `pending` and ends `dead` at once
 * (`step_input_failed`): no creation edge leads to `dead`.
 */
export function createWorkflowRun(
  definition: WorkflowDefinition,
  ids: { readonly workflowId: string; readonly taskIds: readonly string[] },
  now: Date,
  delayMs = 0,
  checkInput?: StepInputCheck,
): { readonly run: WorkflowRun; readonly transitions: readonly PlannedTransition[] } {
  if (ids.taskIds.length !== definition.steps.length) {
    throw new RangeError(`need ${definition.steps.length} task ids, got ${ids.taskIds.length}`);
  }
  const transitions: PlannedTransition[] = [];
  const tasks = definition.steps.map((step, index): RunTask => {
    // A first step runs now (after any delay); an event step waits for its event (R37).
    // A first map step is created pending and started by the engine in the submit's
    // transaction (R44): only the promotion evaluates its list and starts its children.
    const state: TaskState =
      step.after.length > 0 || step.policy.map
        ? 'pending'
        : step.policy.wait === null
          ? 'queued'
          : 'waiting';
    const rule = edgeRuleOf(null, state, 'submitted');
    if (rule === undefined) throw new Error(`the edge table has no creation edge into ${state}`);
    const deadlines = [definition.deadlineMs, step.policy.deadlineMs].filter((ms) => ms !== null);
    const deadlineAt =
      deadlines.length === 0 ? null : new Date(now.getTime() + Math.min(...deadlines));
    const taskId = ids.taskIds[index] as string;
    const rootDelayMs = state === 'queued' ? delayMs + (step.policy.delayMs ?? 0) : 0;
    transitions.push({
      kind: 'task',
      taskId,
      step: step.name,
      edge: {
        from: null,
        to: state,
        reason: 'submitted',
        actor: 'client',
        errorCategory: null,
        errorSummary: null,
        attempt: 0,
        detail: rootDelayMs > 0 ? { delayMs: rootDelayMs } : null,
      },
    });
    const before: TaskSnapshot = {
      state,
      attempt: 0,
      effectStarted: false,
      evidence: null,
      replayCount: 0,
      runAt: null,
      deadlineAt,
      lastErrorCategory: null,
      lastError: null,
      waitTimeoutAt: null,
    };
    const noError = {
      now,
      decidedRunAt: new Date(now.getTime() + rootDelayMs),
      decidedWaitTimeoutAt:
        step.policy.wait === null ? null : new Date(now.getTime() + step.policy.wait.timeoutMs),
      errorCategory: null,
      errorSummary: null,
    };
    const created: RunTask = {
      taskId,
      step: step.name,
      snapshot: nextSnapshot(rule, before, noError),
    };
    if (state !== 'waiting' || checkInput === undefined) return created;
    const problem = checkInput(created);
    if (problem === null) return created;
    // No creation edge leads to dead: the root is created pending, then ends (R58).
    const failed = failedRootEdge(before, step.policy, problem, now);
    const creation = transitions.pop();
    if (creation?.kind !== 'task') throw new Error('unreachable: the root was just created');
    transitions.push({ ...creation, edge: { ...creation.edge, to: 'pending' } });
    transitions.push({ kind: 'task', taskId, step: step.name, edge: failed.edge });
    return { ...created, snapshot: failed.next };
  });
  const state = aggregateWorkflowState(tasks.map((task) => task.snapshot.state));
  transitions.unshift({
    kind: 'workflow',
    from: null,
    to: state,
    reason: 'submitted',
    step: null,
    actor: 'client',
  });
  return { run: { workflowId: ids.workflowId, state, tasks }, transitions };
}

/**
 * Applies one event to one task of a run, then everything that follows in the same
 * transaction: downstream steps promoted when all their upstreams succeeded, pending
 * downstream steps of a cancelled step cancelled, and the parent recomputed (a workflow
 * transition only when it changed). `checkInput` evaluates an event step's key before the step
 * starts waiting (a promotion, a replay); a key that fails ends the step instead (R58).
 */
export function applyTaskEvent(
  definition: WorkflowDefinition,
  run: WorkflowRun,
  taskId: string,
  event: TaskEvent,
  clock: RunClock,
  checkInput?: StepInputCheck,
  facts: Pick<DecideInput, 'hasChildren'> = {},
): RunDecision {
  const task = run.tasks.find((candidate) => candidate.taskId === taskId);
  if (task === undefined)
    throw new RangeError(`task ${taskId} is not part of workflow ${run.workflowId}`);
  const step = definition.steps.find((candidate) => candidate.name === task.step);
  if (step === undefined)
    throw new RangeError(`workflow "${definition.name}" has no step "${task.step}"`);
  const startsWait =
    evaluatesInput(step.policy) && (event.type === 'promote' || event.type === 'replay');
  const decision = decideTaskEdge({
    task: task.snapshot,
    policy: step.policy,
    event,
    ...clock,
    ...inputProblemOf(task, startsWait, checkInput),
    ...facts,
  });
  if (!decision.ok) return decision;
  const tasks = new Map(run.tasks.map((candidate) => [candidate.taskId, candidate]));
  const transitions: PlannedTransition[] = [];
  const record = (target: RunTask, edge: TaskEdge, next: TaskSnapshot) => {
    tasks.set(target.taskId, { ...target, snapshot: next });
    transitions.push({ kind: 'task', taskId: target.taskId, step: target.step, edge });
  };
  record(task, decision.edge, decision.next);
  followUp(
    definition,
    tasks,
    record,
    clock,
    'actor' in event ? event.actor : { kind: 'system' },
    checkInput,
  );
  return finish(run, [...tasks.values()], transitions, task.step, decision.edge);
}

/**
 * Cancels every task of the workflow that can still be stopped: `pending`/`queued`/`waiting`
 * become `cancelled`, `leased` becomes `cancel_requested`; the rest are left as they are. Repeating
 * it produces no edge.
 */
export function cancelWorkflowRun(
  definition: WorkflowDefinition,
  run: WorkflowRun,
  actor: Actor,
  clock: RunClock,
  reason?: string,
): { readonly run: WorkflowRun; readonly transitions: readonly PlannedTransition[] } {
  const tasks = new Map(run.tasks.map((candidate) => [candidate.taskId, candidate]));
  const transitions: PlannedTransition[] = [];
  let cause: { step: string; edge: TaskEdge } | null = null;
  for (const task of run.tasks) {
    const step = definition.steps.find((candidate) => candidate.name === task.step);
    if (step === undefined) continue;
    const current = tasks.get(task.taskId) as RunTask;
    const decision = decideTaskEdge({
      task: current.snapshot,
      policy: step.policy,
      event: reason === undefined ? { type: 'cancel', actor } : { type: 'cancel', actor, reason },
      ...clock,
    });
    if (!decision.ok) continue;
    tasks.set(task.taskId, { ...current, snapshot: decision.next });
    transitions.push({ kind: 'task', taskId: task.taskId, step: task.step, edge: decision.edge });
    cause ??= { step: task.step, edge: decision.edge };
  }
  if (cause === null) return { run, transitions: [] };
  const decided = finish(run, [...tasks.values()], transitions, cause.step, cause.edge);
  return { run: decided.run, transitions: decided.transitions };
}

/** Tasks the promotion rule (`promotionRule`) makes ready now, in definition order. */
export function promotableTasks(
  definition: WorkflowDefinition,
  tasks: readonly RunTask[],
): RunTask[] {
  const stateOf = new Map(tasks.map((task) => [task.step, task.snapshot.state]));
  return tasks.filter((task) => {
    if (task.snapshot.state !== promotionRule.from) return false;
    const step = definition.steps.find((candidate) => candidate.name === task.step);
    return (
      step?.after.every((upstream) => stateOf.get(upstream) === promotionRule.upstreamState) ??
      false
    );
  });
}

function followUp(
  definition: WorkflowDefinition,
  tasks: Map<string, RunTask>,
  record: (target: RunTask, edge: TaskEdge, next: TaskSnapshot) => void,
  clock: RunClock,
  actor: Actor,
  checkInput: StepInputCheck | undefined,
): void {
  // Repeat until nothing changes: a cancel cascades through several pending levels.
  for (let changed = true; changed; ) {
    changed = false;
    const current = [...tasks.values()];
    // A step that is cancelled, or asked to stop, never lets its downstream steps run.
    const upstreamStates: readonly TaskState[] = cancelCascadeRule.upstreamStates;
    const cancelledSteps = current
      .filter((task) => upstreamStates.includes(task.snapshot.state))
      .map((task) => task.step);
    for (const task of current) {
      if (task.snapshot.state !== cancelCascadeRule.from) continue;
      const step = definition.steps.find((candidate) => candidate.name === task.step);
      const cancelledUpstream = step?.after.find((upstream) => cancelledSteps.includes(upstream));
      if (step === undefined || cancelledUpstream === undefined) continue;
      // A step after a cancelled one can never run: cancel it too, by the same actor.
      const cancelActor: Actor = actor.kind === 'operator' ? actor : { kind: 'client' };
      const decision = decideTaskEdge({
        task: task.snapshot,
        policy: step.policy,
        event: { type: 'cancel', actor: cancelActor },
        ...clock,
      });
      if (decision.ok) {
        record(
          task,
          { ...decision.edge, detail: { cascadedFrom: cancelledUpstream } },
          decision.next,
        );
        changed = true;
      }
    }
    for (const task of promotableTasks(definition, [...tasks.values()])) {
      const step = definition.steps.find((candidate) => candidate.name === task.step);
      if (step === undefined) continue;
      const decision = decideTaskEdge({
        task: task.snapshot,
        policy: step.policy,
        event: { type: 'promote' },
        ...clock,
        ...inputProblemOf(task, evaluatesInput(step.policy), checkInput),
      });
      if (decision.ok) {
        record(task, decision.edge, decision.next);
        changed = true;
      }
    }
  }
}

function finish(
  run: WorkflowRun,
  tasks: readonly RunTask[],
  transitions: PlannedTransition[],
  causeStep: string,
  causeEdge: TaskEdge,
): { ok: true; run: WorkflowRun; transitions: readonly PlannedTransition[] } {
  const state = aggregateWorkflowState(tasks.map((task) => task.snapshot.state));
  if (state !== run.state) {
    transitions.push({
      kind: 'workflow',
      from: run.state,
      to: state,
      reason: causeEdge.reason,
      step: causeStep,
      actor: causeEdge.actor,
    });
  }
  return { ok: true, run: { ...run, state, tasks }, transitions };
}
