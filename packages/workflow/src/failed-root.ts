import { edgeRuleOf } from './edge-lookup';
import type { RetryPolicy } from './retry-policy';
import type { StepInputProblem } from './step-input';
import { decideTaskEdge, type TaskEdge } from './task-machine';
import { nextSnapshot, type TaskSnapshot } from './task-snapshot';

/**
 * The edge that ends a first event step whose key failed at submit (R58): the step is created
 * `pending` (no creation edge leads to `dead`), then the machine takes `pending → dead`
 * (`step_input_failed`) with the problem as its error. `before` is the task before its
 * creation edge.
 */
export function failedRootEdge(
  before: TaskSnapshot,
  policy: RetryPolicy,
  problem: StepInputProblem,
  now: Date,
): { readonly edge: TaskEdge; readonly next: TaskSnapshot } {
  const pendingRule = edgeRuleOf(null, 'pending', 'submitted');
  if (pendingRule === undefined)
    throw new Error('the edge table has no creation edge into pending');
  const pending = nextSnapshot(
    pendingRule,
    { ...before, state: 'pending' },
    {
      now,
      decidedRunAt: null,
      decidedWaitTimeoutAt: null,
      errorCategory: null,
      errorSummary: null,
    },
  );
  const decision = decideTaskEdge({
    task: pending,
    policy,
    event: { type: 'promote' },
    now,
    random: () => 0,
    inputProblem: problem,
  });
  if (!decision.ok) {
    throw new Error(`the machine refused to end a failed first step: ${decision.refusal.message}`);
  }
  return { edge: decision.edge, next: decision.next };
}
