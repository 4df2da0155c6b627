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

/**
 * The edge table's rules by (from, to, reason), built once: deciders look edges up for every
 * task they touch, and a scan of the table with `includes` per rule costs more than the rest
 * of a small decision. The first matching row wins, as a scan of the table in order would.
 */
const rulesByEdge: ReadonlyMap<string, readonly EdgeRule[]> = (() => {
  const index = new Map<string, EdgeRule[]>();
  for (const rule of taskEdges) {
    for (const reason of rule.reasons) {
      const key = edgeKey(rule.from, rule.to, reason);
      const rules = index.get(key);
      if (rules === undefined) index.set(key, [rule]);
      else rules.push(rule);
    }
  }
  return index;
})();

function edgeKey(from: TaskState | null, to: TaskState, reason: ReasonCode): string {
  return `${from ?? ''}\n${to}\n${reason}`;
}

/** The rule that allows `from → to` with `reason` by an actor of `actorKind`, if any. */
export function findEdgeRule(
  from: TaskState | null,
  to: TaskState,
  reason: ReasonCode,
  actorKind: ActorKind,
): EdgeRule | undefined {
  return rulesByEdge
    .get(edgeKey(from, to, reason))
    ?.find((rule) => rule.actors.includes(actorKind));
}

/** The rule of `from → to` with `reason`, whoever takes it (effects do not depend on the actor). */
export function edgeRuleOf(
  from: TaskState | null,
  to: TaskState,
  reason: ReasonCode,
): EdgeRule | undefined {
  return rulesByEdge.get(edgeKey(from, to, reason))?.[0];
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

/** The state of a step awaiting its child workflows: entered by `children_started` (R43). */
export const childrenAwaitingState: TaskState = (() => {
  const states = new Set(
    taskEdges.filter((r) => r.reasons.includes('children_started')).map((r) => r.to),
  );
  if (states.size !== 1) throw new Error('the edge table must start children in one state');
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
