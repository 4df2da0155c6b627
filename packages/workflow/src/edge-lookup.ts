import type { ActorKind } from './actors';
import {
  type EdgeRule,
  type ReasonCode,
  type TaskState,
  type TerminalTaskState,
  taskEdges,
  terminalTaskStates,
  terminalWorkflowStates,
  type WorkflowState,
} from './machine-table';

export function isTerminalTaskState(state: TaskState): state is TerminalTaskState {
  return (terminalTaskStates as readonly TaskState[]).includes(state);
}

export function isTerminalWorkflowState(state: WorkflowState): boolean {
  return (terminalWorkflowStates as readonly WorkflowState[]).includes(state);
}

/** The rule that allows `from → to` with `reason` by an actor of `actorKind`, if any. */
export function findEdgeRule(
  from: TaskState | null,
  to: TaskState,
  reason: ReasonCode,
  actorKind: ActorKind,
): EdgeRule | undefined {
  return taskEdges.find(
    (rule) =>
      rule.from === from &&
      rule.to === to &&
      rule.reasons.includes(reason) &&
      rule.actors.includes(actorKind),
  );
}

/** The rule of `from → to` with `reason`, whoever takes it (effects do not depend on the actor). */
export function edgeRuleOf(
  from: TaskState | null,
  to: TaskState,
  reason: ReasonCode,
): EdgeRule | undefined {
  return taskEdges.find(
    (rule) => rule.from === from && rule.to === to && rule.reasons.includes(reason),
  );
}

/** Whether the edge table allows this edge. */
export function isAllowedEdge(
  from: TaskState | null,
  to: TaskState,
  reason: ReasonCode,
  actorKind: ActorKind,
): boolean {
  return findEdgeRule(from, to, reason, actorKind) !== undefined;
}

/** States whose task holds a lease: entered by an edge that takes or keeps one. */
export const leaseHoldingStates: readonly TaskState[] = Object.freeze([
  ...new Set(taskEdges.filter((rule) => rule.lease !== 'release').map((rule) => rule.to)),
]);

/** The state a claim leaves (`run_at` decides when), and the state it enters. */
export const claimRule: EdgeRule = (() => {
  const rules = taskEdges.filter((rule) => rule.lease === 'take');
  if (rules.length !== 1) throw new Error('the edge table must have exactly one claim edge');
  return rules[0] as EdgeRule;
})();

/** The state of a task waiting for its receipt: entered by edges that await one. */
export const receiptAwaitingState: TaskState = (() => {
  const states = new Set(taskEdges.filter((r) => r.receipt === 'await').map((r) => r.to));
  if (states.size !== 1) throw new Error('the edge table must await receipts in one state');
  return [...states][0] as TaskState;
})();

/** The state of an event step waiting for its event: entered by edges that start a wait. */
export const eventWaitingState: TaskState = (() => {
  const states = new Set(taskEdges.filter((r) => r.wait === 'start').map((r) => r.to));
  if (states.size !== 1) throw new Error('the edge table must start waits in one state');
  return [...states][0] as TaskState;
})();

/** The state an operator replay leaves. */
export const replayableState: TaskState = (() => {
  const states = new Set(taskEdges.filter((r) => r.replay === 'next').map((r) => r.from));
  if (states.size !== 1 || states.has(null)) throw new Error('replays must leave one state');
  return [...states][0] as TaskState;
})();
