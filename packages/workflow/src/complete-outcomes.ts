import { aggregateByPresence, aggregateWorkflowState } from './aggregate';
import type { ReasonCode } from './machine-table';
import {
  type EdgeRule,
  promotionRule,
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
import { decideTaskEdge, type TaskEdge } from './task-machine';
import type { TaskSnapshot } from './task-snapshot';

/**
 * What a worker's `complete` of its leased task does, as data, so the engine can write the
 * common result in one SQL statement without re-implementing the machine: the task's edge by
 * the state it is in, the promotion edge of a task the promotion rule makes ready, and the
 * parent's state for every set of child states. The machine chooses the edges; their rows
 * (whose effects the statement writes) come from the edge table.
 */
export interface CompleteOutcomes {
  /** The complete edge from each state that has one; all share one row's effects. */
  readonly completeEdges: readonly {
    readonly from: TaskState;
    readonly to: TaskState;
    readonly reason: ReasonCode;
  }[];
  /** The effects every complete edge writes. */
  readonly completeRule: EdgeRule;
  /** The promotion edge (`promotionRule.from` → …) and its row. */
  readonly promote: {
    readonly to: TaskState;
    readonly reason: ReasonCode;
    readonly actor: string;
    readonly rule: EdgeRule;
  };
  /**
   * The parent's state for a set of child states, by bit mask: bit i is set when some child is
   * in `taskStates[i]` (the aggregation looks only at which states are present).
   */
  readonly parentByPresence: ReadonlyMap<number, WorkflowState>;
}

const sample: TaskSnapshot = {
  state: 'leased',
  attempt: 2,
  effectStarted: true,
  evidence: 'ev-1',
  replayCount: 1,
  runAt: null,
  deadlineAt: new Date(5_000_000),
  lastErrorCategory: 'network',
  lastError: 'reset',
  waitTimeoutAt: null,
};

const rowOf = (rules: readonly EdgeRule[], edge: TaskEdge) =>
  rules.find(
    (rule) => rule.from === edge.from && rule.to === edge.to && rule.reasons.includes(edge.reason),
  );

/**
 * Derives the outcomes, or says why one statement cannot write them. `rules` is the edge table
 * whose effects the statement would write (the shipped one unless a test asks otherwise).
 */
export function deriveCompleteOutcomes(
  rules: readonly EdgeRule[] = taskEdges,
): Derived<CompleteOutcomes> {
  const now = new Date(1_000_000);
  const random = () => 0;
  const actor = { kind: 'worker', name: 'derive' } as const;
  const completeEdges: CompleteOutcomes['completeEdges'][number][] = [];
  let completeRule: EdgeRule | null = null;
  for (const from of taskStates) {
    const event = { type: 'complete', actor } as const;
    const task = { ...sample, state: from };
    const decision = decideTaskEdge({ task, policy: defaultRetryPolicy, event, now, random });
    if (!decision.ok) continue;
    const { edge } = decision;
    const rule = rowOf(rules, edge);
    if (rule === undefined) return { ok: false, reason: `no row for ${from} → ${edge.to}` };
    const problem = inexpressibleEdge(edge) ?? inexpressibleEffects(rule);
    if (problem !== null) return { ok: false, reason: problem };
    if (rule.lease === 'take') return { ok: false, reason: `completing ${from} takes a lease` };
    if (completeRule !== null && !sameEffects(completeRule, rule)) {
      return { ok: false, reason: 'complete edges from different states differ in effects' };
    }
    completeRule = rule;
    completeEdges.push({ from, to: edge.to, reason: edge.reason });
  }
  if (completeRule === null) return { ok: false, reason: 'no state has a complete edge' };
  const pending = { ...sample, state: promotionRule.from, runAt: null };
  const promoted = decideTaskEdge({
    task: pending,
    policy: defaultRetryPolicy,
    event: { type: 'promote' },
    now,
    random,
  });
  if (!promoted.ok)
    return { ok: false, reason: `promotion is refused: ${promoted.refusal.message}` };
  const promoteRule = rowOf(rules, promoted.edge);
  if (promoteRule === undefined) return { ok: false, reason: 'no row for the promotion edge' };
  const problem = inexpressibleEdge(promoted.edge) ?? inexpressibleEffects(promoteRule);
  if (problem !== null) return { ok: false, reason: problem };
  if (promoteRule.lease === 'take') return { ok: false, reason: 'promotion takes a lease' };
  const parentByPresence = new Map<number, WorkflowState>();
  for (let mask = 1; mask < 1 << taskStates.length; mask += 1) {
    const present = taskStates.filter((_, index) => (mask & (1 << index)) !== 0);
    const state = aggregateByPresence(mask);
    // Repeating states must not change the answer, or presence is not all that counts.
    if (aggregateWorkflowState([...present, ...present]) !== state) {
      return { ok: false, reason: 'the aggregation counts children, not present states' };
    }
    parentByPresence.set(mask, state);
  }
  return {
    ok: true,
    outcomes: {
      completeEdges,
      completeRule,
      promote: {
        to: promoted.edge.to,
        reason: promoted.edge.reason,
        actor: promoted.edge.actor,
        rule: promoteRule,
      },
      parentByPresence,
    },
  };
}
