import { formatActor } from './actors';
import { aggregateWorkflowState } from './aggregate';
import type { ReasonCode } from './reason-codes';
import { defaultRetryPolicy } from './retry-policy';
import { type TaskState, taskStates, type WorkflowState } from './states';
import { decideTaskEdge, type TaskSnapshot } from './task-machine';

/**
 * What a worker's `complete` of its leased task does, as data, so the engine can write the
 * common result in one SQL statement without re-implementing the machine: the task's edge by
 * the state it is in, the promotion edge of a pending step whose upstream steps have all
 * succeeded, and the parent's state for every set of child states. Read off the machine
 * (`decideTaskEdge`, `aggregateWorkflowState`).
 */
export interface CompleteOutcomes {
  /** The complete edge from each state that has one (the task changes nothing but its state). */
  readonly completeEdges: readonly {
    readonly from: TaskState;
    readonly to: TaskState;
    readonly reason: ReasonCode;
  }[];
  /** The promotion edge (`pending` → …); the task's `run_at` becomes the decision's time. */
  readonly promote: { readonly to: TaskState; readonly reason: ReasonCode; readonly actor: string };
  /**
   * The parent's state for a set of child states, by bit mask: bit i is set when some child is
   * in `taskStates[i]`. The aggregation looks only at which states are present, which
   * the derivation checks by also folding each set with its states repeated.
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
};

/**
 * Derives the outcomes from the machine, or null if some edge is not one the table can express
 * (a complete that changed anything but the state, a promotion that changed anything but the
 * state and `run_at`, or an aggregation that counts children rather than looking at states).
 */
export function deriveCompleteOutcomes(): CompleteOutcomes | null {
  const now = new Date(1_000_000);
  const random = () => 0;
  const actor = { kind: 'worker', name: 'derive' } as const;
  const completeEdges: CompleteOutcomes['completeEdges'][number][] = [];
  for (const from of taskStates) {
    const task = { ...sample, state: from };
    const decision = decideTaskEdge({
      task,
      policy: defaultRetryPolicy,
      event: { type: 'complete', actor },
      now,
      random,
    });
    if (!decision.ok) continue;
    const { edge, next } = decision;
    const onlyState =
      JSON.stringify({ ...next, state: from }) === JSON.stringify(task) &&
      edge.actor === formatActor(actor) &&
      edge.attempt === task.attempt &&
      edge.errorCategory === null &&
      edge.errorSummary === null &&
      edge.detail === null;
    if (!onlyState) return null;
    completeEdges.push({ from, to: edge.to, reason: edge.reason });
  }
  const pending = { ...sample, state: 'pending' as const, runAt: null };
  const promoted = decideTaskEdge({
    task: pending,
    policy: defaultRetryPolicy,
    event: { type: 'promote' },
    now,
    random,
  });
  if (!promoted.ok) return null;
  const promoteExpressible =
    JSON.stringify({ ...promoted.next, state: 'pending', runAt: null }) ===
      JSON.stringify(pending) &&
    promoted.next.runAt?.getTime() === now.getTime() &&
    promoted.edge.attempt === pending.attempt &&
    promoted.edge.errorCategory === null &&
    promoted.edge.detail === null;
  if (!promoteExpressible) return null;
  const parentByPresence = new Map<number, WorkflowState>();
  for (let mask = 1; mask < 1 << taskStates.length; mask += 1) {
    const present = taskStates.filter((_, index) => (mask & (1 << index)) !== 0);
    const state = aggregateWorkflowState(present);
    // Repeating states must not change the answer, or presence is not all that counts.
    if (aggregateWorkflowState([...present, ...present]) !== state) return null;
    parentByPresence.set(mask, state);
  }
  return {
    completeEdges,
    promote: { to: promoted.edge.to, reason: promoted.edge.reason, actor: promoted.edge.actor },
    parentByPresence,
  };
}
