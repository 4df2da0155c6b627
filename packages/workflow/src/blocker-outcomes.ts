import type { BlockerInput } from './blocker-input';
import type { TaskEvent } from './task-events';
import { decideTaskEdge, type TaskEdge } from './task-machine';

/** What the task becomes when the sweeper acts at a time, as `then` facts say it. */
export type SweeperThen = 'retry' | 'dead' | 'cancel' | 'succeed';

export interface SweeperOutcome {
  /** The `then` fact. */
  readonly result: SweeperThen;
  readonly edge: TaskEdge;
  /** "re-runs it (lease_expired)", "marks it dead (lease_expired_effect_uncertain: …)". */
  readonly phrase: string;
}

const sweeper = { kind: 'sweeper' } as const;

/**
 * The edge the sweeper will write for `event` at `at`, asked of the machine itself (the same
 * decision the sweeper makes then), so a blocker never restates a rule. Jitter is taken as
 * zero: a retry's backoff only matters against a deadline, and then the earliest retry is
 * the one that could still make it. Null when this process does not define the step.
 */
export function sweeperOutcome(
  input: BlockerInput,
  type: 'lease_expired' | 'receipt_timeout' | 'wait_timeout',
  at: Date,
): SweeperOutcome | null {
  if (input.policy === null) return null;
  const event: TaskEvent = { type, actor: sweeper };
  const decision = decideTaskEdge({
    task: input.task.snapshot,
    policy: input.policy,
    event,
    now: new Date(Math.max(at.getTime(), input.now.getTime())),
    random: () => 0,
  });
  if (!decision.ok) return null;
  const { edge } = decision;
  switch (edge.to) {
    case 'queued':
      return { result: 'retry', edge, phrase: retryPhrase(edge, input.policy.maxAttempts) };
    case 'cancelled':
      return { result: 'cancel', edge, phrase: `cancels it (${edge.reason}: no effect started)` };
    case 'succeeded':
      return {
        result: 'succeed',
        edge,
        phrase: `succeeds with its declared onTimeout output (${edge.reason})`,
      };
    default:
      return { result: 'dead', edge, phrase: `marks it dead (${deadWhy(input, edge)})` };
  }
}

function retryPhrase(edge: TaskEdge, maxAttempts: number): string {
  const evidence = edge.detail?.evidence;
  if (typeof evidence === 'string') {
    return `queues it again to ask for the outcome of its effect (evidence ${evidence}), not to resubmit (${edge.reason})`;
  }
  return `queues it again for attempt ${edge.attempt + 1} of ${maxAttempts} (${edge.reason})`;
}

function deadWhy(input: BlockerInput, edge: TaskEdge): string {
  switch (edge.reason) {
    case 'lease_expired_effect_uncertain':
      return `${edge.reason}: its effect started and the step is not reentrant, so it is never run again blindly`;
    case 'attempts_exhausted':
      return `${edge.reason}: attempt ${edge.attempt} was the last of ${input.policy?.maxAttempts ?? input.task.maxAttempts}`;
    case 'deadline_exceeded':
      return `${edge.reason}: a retry would start after its deadline`;
    default:
      return edge.reason;
  }
}
