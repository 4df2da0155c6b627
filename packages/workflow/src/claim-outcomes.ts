import { aggregateWorkflowState } from './aggregate';
import {
  type EdgeRule,
  type TaskState,
  taskEdges,
  taskStates,
  type WorkflowState,
} from './machine-table';
import {
  type Derived,
  inexpressibleEdge,
  inexpressibleEffects,
  sameEffects,
} from './one-statement-derivation';
import { defaultRetryPolicy } from './retry-policy';
import { decideTaskEdge } from './task-machine';
import type { TaskSnapshot } from './task-snapshot';

/**
 * What a worker's claim of a ready task does, as data, so the engine can claim in one SQL
 * statement without re-implementing the machine: the edge's row (whose effects the statement
 * writes), and the parent's state after the claim as a function of its state before. The
 * machine chooses the edge (`decideTaskEdge`); the row comes from the edge table.
 */
export interface ClaimOutcomes {
  readonly rule: EdgeRule;
  readonly reason: EdgeRule['reasons'][number];
  /**
   * The parent's state after the claim, by its state before. A parent state whose answer
   * would depend on more than that state is absent (the engine then decides in full).
   */
  readonly parentAfter: ReadonlyMap<WorkflowState, WorkflowState>;
}

/**
 * Derives the claim's outcomes, or says why one statement cannot write it. Only a due task
 * whose deadline has not passed is covered: the engine leaves the rest to the full decision
 * (which finalizes a task past its deadline, R28). `rules` is the edge table whose effects
 * the statement would write (the shipped one unless a test asks otherwise).
 */
export function deriveClaimOutcomes(
  rules: readonly EdgeRule[] = taskEdges,
): Derived<ClaimOutcomes> {
  const now = new Date(1_000_000);
  const samples: TaskSnapshot[] = [
    {
      state: 'queued',
      attempt: 0,
      effectStarted: false,
      evidence: null,
      replayCount: 0,
      runAt: now,
      deadlineAt: null,
      lastErrorCategory: null,
      lastError: null,
      waitTimeoutAt: null,
    },
    {
      state: 'queued',
      attempt: 3,
      effectStarted: true,
      evidence: 'ev-1',
      replayCount: 2,
      runAt: new Date(now.getTime() - 5_000),
      deadlineAt: new Date(now.getTime() + 60_000),
      lastErrorCategory: 'network',
      lastError: 'reset',
      waitTimeoutAt: null,
    },
  ];
  let found: { rule: EdgeRule; reason: EdgeRule['reasons'][number] } | null = null;
  for (const task of samples) {
    const decision = decideTaskEdge({
      task,
      policy: defaultRetryPolicy,
      event: { type: 'claim', actor: { kind: 'worker', name: 'derive' } },
      now,
      random: () => 0,
    });
    if (!decision.ok)
      return { ok: false, reason: `a due claim is refused: ${decision.refusal.message}` };
    const { edge } = decision;
    const notAnEdge = inexpressibleEdge(edge);
    if (notAnEdge !== null) return { ok: false, reason: notAnEdge };
    const rule = rules.find(
      (candidate) =>
        candidate.from === edge.from &&
        candidate.to === edge.to &&
        candidate.reasons.includes(edge.reason),
    );
    if (rule === undefined)
      return {
        ok: false,
        reason: `the table has no row for the claim edge ${edge.from} → ${edge.to}`,
      };
    if (rule.lease !== 'take')
      return {
        ok: false,
        reason: `the claim edge ${edge.from} → ${edge.to} does not take the lease`,
      };
    const notEffects = inexpressibleEffects(rule);
    if (notEffects !== null) return { ok: false, reason: notEffects };
    if (found === null) found = { rule, reason: edge.reason };
    else if (
      found.reason !== edge.reason ||
      !sameEffects(found.rule, rule) ||
      found.rule.to !== rule.to
    ) {
      return { ok: false, reason: 'claims of different due tasks take different edges' };
    }
  }
  if (found === null) return { ok: false, reason: 'no claim was sampled' };
  const from = found.rule.from as TaskState; // a claim leaves the sampled state
  return { ok: true, outcomes: { ...found, parentAfter: parentAfterClaim(from, found.rule.to) } };
}

/**
 * Every combination of sibling states the aggregation can tell apart (which states are
 * present, and whether another sibling ready to claim remains), the parent before and after
 * one child takes the claim edge. A parent state is kept only if every combination gives
 * it the same successor.
 */
function parentAfterClaim(
  claimedFrom: TaskState,
  claimedTo: TaskState,
): Map<WorkflowState, WorkflowState> {
  const others = taskStates.filter((state) => state !== claimedFrom);
  const seen = new Map<WorkflowState, Set<WorkflowState>>();
  for (let mask = 0; mask < 1 << others.length; mask += 1) {
    const present = others.filter((_, index) => (mask & (1 << index)) !== 0);
    for (const extraQueued of [false, true]) {
      const before: TaskState[] = [claimedFrom, ...present, ...(extraQueued ? [claimedFrom] : [])];
      const after: TaskState[] = [claimedTo, ...before.slice(1)];
      const from = aggregateWorkflowState(before);
      const to = aggregateWorkflowState(after);
      const successors = seen.get(from) ?? new Set<WorkflowState>();
      successors.add(to);
      seen.set(from, successors);
    }
  }
  const table = new Map<WorkflowState, WorkflowState>();
  for (const [from, successors] of seen) {
    if (successors.size === 1) table.set(from, [...successors][0] as WorkflowState);
  }
  return table;
}
