import { aggregateWorkflowState } from './aggregate';
import type { ReasonCode } from './reason-codes';
import { defaultRetryPolicy } from './retry-policy';
import { type TaskState, taskStates, type WorkflowState } from './states';
import { decideTaskEdge, type TaskSnapshot } from './task-machine';

/**
 * What a worker's claim of a ready `queued` task does, as data, so the engine can claim in one
 * SQL statement without re-implementing the machine: the edge, how the task's columns change,
 * and the parent's state after the claim as a function of its state before. Everything here
 * is read off the machine itself (`decideTaskEdge`, `aggregateWorkflowState`).
 */
export interface ClaimOutcomes {
  readonly to: TaskState;
  readonly reason: ReasonCode;
  /** The claim's attempt is the task's attempt plus this. */
  readonly attemptIncrement: number;
  /** `effect_started` after the claim (a new attempt has started nothing yet). */
  readonly effectStarted: boolean;
  /**
   * The parent's state after the claim, by its state before. A parent state whose answer
   * would depend on more than that state is absent (the engine then decides in full).
   */
  readonly parentAfter: ReadonlyMap<WorkflowState, WorkflowState>;
}

/**
 * Derives the claim's outcomes from the machine, or null if the claim edge is not one the
 * table can express (a claim that moved `run_at` anywhere but null, or touched another field).
 * Only a due task whose deadline has not passed is covered: the engine leaves the rest to the
 * full decision (which finalizes a task past its deadline, R28).
 */
export function deriveClaimOutcomes(): ClaimOutcomes | null {
  const now = new Date(1_000_000);
  const decide = (task: TaskSnapshot) =>
    decideTaskEdge({
      task,
      policy: defaultRetryPolicy,
      event: { type: 'claim', actor: { kind: 'worker', name: 'derive' } },
      now,
      random: () => 0,
    });
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
    },
  ];
  let first: Omit<ClaimOutcomes, 'parentAfter'> | null = null;
  for (const task of samples) {
    const decision = decide(task);
    if (!decision.ok) return null;
    const { next, edge } = decision;
    const outcome = {
      to: edge.to,
      reason: edge.reason,
      attemptIncrement: next.attempt - task.attempt,
      effectStarted: next.effectStarted,
    };
    // The statement sets state, attempt, effect_started and run_at = null; nothing else may move.
    const expressible =
      edge.from === 'queued' &&
      edge.attempt === next.attempt &&
      edge.errorCategory === null &&
      edge.errorSummary === null &&
      edge.detail === null &&
      next.runAt === null &&
      next.evidence === task.evidence &&
      next.replayCount === task.replayCount &&
      next.deadlineAt === task.deadlineAt &&
      next.lastErrorCategory === task.lastErrorCategory &&
      next.lastError === task.lastError;
    if (!expressible) return null;
    if (first === null) first = outcome;
    else if (JSON.stringify(first) !== JSON.stringify(outcome)) return null;
  }
  if (first === null) return null;
  return { ...first, parentAfter: parentAfterClaim(first.to) };
}

/**
 * Every combination of sibling states the aggregation can tell apart (which states are
 * present, and whether another queued sibling remains), the parent before and after one
 * queued child takes the claim edge. A parent state is kept only if every combination gives
 * it the same successor.
 */
function parentAfterClaim(claimedTo: TaskState): Map<WorkflowState, WorkflowState> {
  const others = taskStates.filter((state) => state !== 'queued');
  const seen = new Map<WorkflowState, Set<WorkflowState>>();
  for (let mask = 0; mask < 1 << others.length; mask += 1) {
    const present = others.filter((_, index) => (mask & (1 << index)) !== 0);
    for (const extraQueued of [false, true]) {
      const before: TaskState[] = [
        'queued',
        ...present,
        ...(extraQueued ? ['queued' as const] : []),
      ];
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
