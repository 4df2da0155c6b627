import { type Actor, formatActor } from './actors';
import {
  cancelledWhileAwaitingChildren,
  decideChildrenChanged,
  decideStartChildren,
} from './children-decisions';
import { edgeRuleOf, findEdgeRule, isTerminalTaskState } from './edge-lookup';
import type { ErrorCategory } from './error-categories';
import {
  type Choice,
  type ChoiceOrRefusal,
  choose,
  type DecideInput,
  dead,
  deadlinePassed,
  notApplicable,
  type Refusal,
  refuse,
  requesterReason,
  waitFrom,
} from './machine-choice';
import type { ReasonCode, TaskState } from './machine-table';
import { decideReplay } from './replay-decisions';
import { decideFailure, decideLeaseExpiry, retryOrDead } from './retry-decisions';
import { snoozeUntilProblem } from './step-results';
import { nextSnapshot, type TaskSnapshot } from './task-snapshot';

/** The edge to write, with the task as it is after it. */
export interface TaskEdge {
  /** `null` only for the creation edge (∅ → queued/pending). */
  readonly from: TaskState | null;
  readonly to: TaskState;
  readonly reason: ReasonCode;
  /** `worker:<holder>`, `operator:<name>`, `sweeper:<holder>`, `client`, … */
  readonly actor: string;
  readonly errorCategory: ErrorCategory | null;
  readonly errorSummary: string | null;
  /** Attempt the edge belongs to (for a claim: the new attempt). */
  readonly attempt: number;
  readonly detail: Readonly<Record<string, unknown>> | null;
}

export type TaskDecision =
  | { readonly ok: true; readonly edge: TaskEdge; readonly next: TaskSnapshot }
  | { readonly ok: false; readonly refusal: Refusal };

const systemActor: Actor = { kind: 'system' };

/** A queued task whose absolute deadline passed before it started (R28). */
const deadlinePassedBeforeStart: Choice = choose('dead', 'deadline_exceeded_before_start', {
  errorCategory: 'timeout',
  errorSummary: 'the deadline passed before the task started',
});

/**
 * Chooses the edge for an event, or refuses. Never throws on a bad event; every edge it
 * returns is one the edge table allows (it checks before answering), and the task after it
 * is the table's effects of that edge applied to the task (`nextSnapshot`).
 */
export function decideTaskEdge(input: DecideInput): TaskDecision {
  const { task, event } = input;
  const decision = chooseEdge(input);
  if (!decision.ok) return decision;
  const actor = 'actor' in event ? event.actor : systemActor;
  const edgeActor = decision.actor ?? actor;
  if (findEdgeRule(task.state, decision.to, decision.reason, edgeActor.kind) === undefined) {
    return refuse(
      task,
      'actor_not_allowed',
      `${task.state} → ${decision.to} (${decision.reason}) is not an edge a ${edgeActor.kind} may take`,
    );
  }
  const rule = edgeRuleOf(task.state, decision.to, decision.reason);
  if (rule === undefined) throw new Error('unreachable: the actor check found the row');
  const errorCategory = decision.errorCategory ?? null;
  const errorSummary = decision.errorSummary ?? null;
  const next = nextSnapshot(rule, task, {
    now: input.now,
    decidedRunAt: decision.runAt ?? null,
    decidedWaitTimeoutAt: decision.waitTimeoutAt ?? null,
    errorCategory,
    errorSummary,
  });
  const edge: TaskEdge = {
    from: task.state,
    to: decision.to,
    reason: decision.reason,
    actor: formatActor(edgeActor),
    errorCategory,
    errorSummary,
    attempt: next.attempt,
    detail: decision.detail ?? null,
  };
  return { ok: true, edge, next };
}

function chooseEdge(input: DecideInput): ChoiceOrRefusal {
  const { task, event, now } = input;
  if (isTerminalTaskState(task.state) && event.type !== 'replay') {
    return refuse(
      task,
      'terminal_state',
      `the task is ${task.state}: it never changes again except by operator replay`,
    );
  }
  if (cancelledWhileAwaitingChildren(input)) return notApplicable(task, event.type);
  switch (event.type) {
    case 'promote':
      if (task.state !== 'pending') return notApplicable(task, event.type);
      return promote(input);

    case 'claim':
      if (task.state !== 'queued') return notApplicable(task, event.type);
      if (event.actor.kind !== 'worker') {
        return refuse(
          task,
          'actor_not_allowed',
          `only a worker claims a task, not a ${event.actor.kind}`,
        );
      }
      if (task.runAt !== null && task.runAt.getTime() > now.getTime()) {
        return refuse(
          task,
          'not_ready',
          `the task may not run before ${task.runAt.toISOString()} (R4)`,
        );
      }
      if (deadlinePassed(task, now)) return { ...deadlinePassedBeforeStart, actor: systemActor };
      return choose('leased', 'lease_acquired');

    case 'complete':
      if (task.state === 'leased') return choose('succeeded', 'completed');
      if (task.state === 'cancel_requested') return choose('succeeded', 'cancel_after_submit');
      return notApplicable(task, event.type);

    case 'await_receipt':
      if (task.state === 'leased') return choose('awaiting_receipt', 'submitted_awaiting_receipt');
      if (task.state === 'cancel_requested')
        return choose('awaiting_receipt', 'cancel_after_submit');
      return notApplicable(task, event.type);

    case 'fail':
      return decideFailure(input, event.category, event.summary, event.retryAfterMs);

    case 'lease_expired':
      return decideLeaseExpiry(input);

    case 'release':
      if (task.state !== 'leased' && task.state !== 'cancel_requested') {
        return notApplicable(task, event.type);
      }
      if (task.effectStarted) {
        return refuse(
          task,
          'effect_started',
          'the attempt started its effect; only lease expiry may settle it',
        );
      }
      if (task.state === 'cancel_requested') {
        return choose('cancelled', 'cancel_confirmed', { detail: { during: 'shutdown' } });
      }
      // The attempt did nothing: hand it back without spending the attempt (the row refunds it).
      return choose('queued', 'worker_shutdown');

    case 'snooze':
      return decideSnooze(input, event);

    case 'boundary':
      if (task.state === 'cancel_requested') return choose('cancelled', 'cancel_confirmed');
      return notApplicable(task, event.type);

    case 'cancel':
      switch (task.state) {
        case 'pending':
        case 'queued':
          return choose('cancelled', 'cancelled_before_start', requesterReason(event.reason));
        case 'waiting':
          return choose('cancelled', 'cancelled_while_waiting', requesterReason(event.reason));
        case 'leased':
        case 'awaiting_children':
          return choose('cancel_requested', 'cancel_requested', requesterReason(event.reason));
        case 'cancel_requested':
          return refuse(
            task,
            'cancel_already_requested',
            'a cancel was already requested; the worker will confirm it',
          );
        case 'awaiting_receipt':
          return refuse(
            task,
            'effect_already_submitted',
            'the submission was already accepted; the cancel came too late',
          );
        default:
          return notApplicable(task, event.type);
      }

    case 'supersede':
      if (task.state !== 'pending' && task.state !== 'queued') {
        return notApplicable(task, event.type);
      }
      if (task.attempt > 0 || task.replayCount > 0) {
        return refuse(task, 'already_started', 'the task was claimed before; it has started');
      }
      return choose('cancelled', 'superseded', { detail: { supersededBy: event.by } });

    case 'receipt_confirmed':
      if (task.state !== 'awaiting_receipt') return notApplicable(task, event.type);
      return choose('succeeded', 'receipt_confirmed');

    case 'receipt_rejected':
      if (task.state !== 'awaiting_receipt') return notApplicable(task, event.type);
      return retryOrDead(input, {
        retryReason: 'receipt_rejected',
        deadReason: 'receipt_rejected',
        category: event.category,
        summary: event.summary,
      });

    case 'receipt_timeout':
      if (task.state !== 'awaiting_receipt') return notApplicable(task, event.type);
      if (!input.policy.reentrant) {
        return dead('receipt_timeout', 'timeout', 'no receipt arrived before its deadline');
      }
      return retryOrDead(input, {
        retryReason: 'receipt_timeout',
        deadReason: 'receipt_timeout',
        category: 'timeout',
        summary: 'no receipt arrived before its deadline',
      });

    case 'deadline_passed':
      if (
        task.state !== 'queued' &&
        task.state !== 'waiting' &&
        task.state !== 'awaiting_children'
      ) {
        return notApplicable(task, event.type);
      }
      if (!deadlinePassed(task, now)) {
        return refuse(task, 'deadline_not_reached', 'the deadline has not passed yet');
      }
      if (task.state === 'awaiting_children') {
        return dead(
          'deadline_exceeded',
          'timeout',
          'the deadline passed while the step awaited its child workflows',
        );
      }
      if (task.state === 'waiting') {
        return dead(
          'deadline_exceeded',
          'timeout',
          'the deadline passed while the step waited for its event',
        );
      }
      return { ...deadlinePassedBeforeStart, actor: systemActor };

    case 'event_received':
      if (task.state !== 'waiting') return notApplicable(task, event.type);
      return choose('succeeded', 'event_received', {
        detail: { eventId: event.eventId, ...requesterReason(event.reason).detail },
      });

    case 'wait_timeout':
      return decideWaitTimeout(input);

    case 'start_children':
      return decideStartChildren(input, event);

    case 'children_changed':
      return decideChildrenChanged(input, event);

    case 'replay':
      return decideReplay(input, event);
    default:
      // Untyped callers (JSON from an API) can send anything: refuse, never throw.
      return refuse(
        task,
        'not_applicable',
        `unknown event ${JSON.stringify((event as { type?: unknown }).type)}`,
      );
  }
}

/** A ready step is queued after its `delayMs` (R36), and its edge says until when. */
function promote(input: DecideInput): Choice {
  // A map step runs no code: it starts one child workflow per element of its list (R44); a
  // list that could not be evaluated ends the step here (R58).
  if (input.policy.map) {
    const problem = input.inputProblem;
    if (problem != null) return stepInputFailed(problem);
    return choose('awaiting_children', 'children_started');
  }
  // An event step runs no code: it waits for its event, and gives up after its timeout (R37);
  // a key that failed would make that a wait nothing can match, so the step ends here (R58).
  if (input.policy.wait !== null) {
    const problem = input.inputProblem;
    if (problem != null) return stepInputFailed(problem);
    return choose('waiting', 'event_awaited', waitFrom(input));
  }
  const delayMs = input.policy.delayMs ?? 0;
  if (delayMs === 0) return choose('queued', 'upstream_succeeded', { runAt: input.now });
  const runAt = new Date(input.now.getTime() + delayMs);
  return choose('queued', 'upstream_succeeded', {
    runAt,
    detail: { runAt: runAt.toISOString(), delayMs },
  });
}

/** A function the engine evaluates for the step threw or gave an invalid value (R58). */
function stepInputFailed(problem: NonNullable<DecideInput['inputProblem']>): Choice {
  return choose('dead', 'step_input_failed', {
    errorCategory: problem.category,
    errorSummary: problem.summary,
    detail: { input: problem.input, error: problem.summary },
  });
}

/**
 * A snooze (R36) hands the lease back without spending the attempt, until the time asked for;
 * past the deadline the task ends instead. Under a cancel request it is a boundary: the
 * cancel is confirmed. An `untilMs` out of range by database time fails the attempt for good,
 * as the bad arguments `snooze()` throws on do.
 */
function decideSnooze(
  input: DecideInput,
  event: Extract<DecideInput['event'], { type: 'snooze' }>,
): ChoiceOrRefusal {
  const { task, now } = input;
  if (task.state === 'cancel_requested') {
    return choose('cancelled', 'cancel_confirmed', { detail: { during: 'snooze' } });
  }
  if (task.state !== 'leased') return notApplicable(task, event.type);
  const untilProblem =
    event.untilMs === null ? null : snoozeUntilProblem(event.untilMs, now.getTime());
  if (untilProblem !== null) {
    return dead('non_retryable_error', 'invalid_argument', `snooze: ${untilProblem}`);
  }
  const asked =
    event.forMs !== null ? now.getTime() + event.forMs : (event.untilMs ?? now.getTime());
  const runAt = new Date(Math.max(asked, now.getTime()));
  if (task.deadlineAt !== null && runAt.getTime() >= task.deadlineAt.getTime()) {
    return dead(
      'deadline_exceeded',
      'timeout',
      `the step snoozed until ${runAt.toISOString()}, past its deadline`,
    );
  }
  return choose('queued', 'snoozed', {
    runAt,
    detail: { runAt: runAt.toISOString(), reason: event.reason },
  });
}

/**
 * A wait that reached its timeout ends as declared: with the step's `onTimeout` output, or
 * dead (R39). Before the timeout it is refused, so a sweeper with a stale view writes nothing.
 */
function decideWaitTimeout(input: DecideInput): ChoiceOrRefusal {
  const { task, now, policy } = input;
  if (task.state !== 'waiting') return notApplicable(task, input.event.type);
  if (task.waitTimeoutAt === null || task.waitTimeoutAt.getTime() > now.getTime()) {
    return refuse(task, 'wait_not_expired', 'the wait has not reached its timeout');
  }
  if (policy.wait?.succeedsOnTimeout === true) return choose('succeeded', 'event_timeout');
  return dead('event_timeout', 'timeout', 'no event arrived before the wait gave up');
}
