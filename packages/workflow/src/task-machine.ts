import { type Actor, formatActor } from './actors';
import { findEdgeRule } from './edges';
import { type ErrorCategory, isRetryableCategory } from './error-categories';
import type { ReasonCode } from './reason-codes';
import { nextRunAt, type RetryPolicy } from './retry-policy';
import { isTerminalTaskState, type TaskState } from './states';

/** What the machine needs to know about a task to choose its next edge. */
export interface TaskSnapshot {
  readonly state: TaskState;
  /** Claims made in the current replay round; the first run is attempt 1. */
  readonly attempt: number;
  /** The current attempt persisted its "effect started" marker (boundary or checkpoint), R10. */
  readonly effectStarted: boolean;
  /**
   * The external system's acceptance id of this task's effect, recorded before anything
   * else (R21). With it, a re-run asks for the outcome instead of resubmitting, so a lost
   * lease is no longer "effect uncertain".
   */
  readonly evidence: string | null;
  readonly replayCount: number;
  /** When a queued task becomes eligible (database time). */
  readonly runAt: Date | null;
  /** Absolute deadline (acceptance + budget), R28/R29; null when none. */
  readonly deadlineAt: Date | null;
  readonly lastErrorCategory: ErrorCategory | null;
  readonly lastError: string | null;
}

/** Everything that can happen to a task. Who caused it is part of the event. */
export type TaskEvent =
  /** Every upstream step succeeded. */
  | { readonly type: 'promote' }
  /** A worker claims the task (SKIP LOCKED in the engine). */
  | { readonly type: 'claim'; readonly actor: Actor }
  /** The step returned an output: its effect is confirmed. */
  | { readonly type: 'complete'; readonly actor: Actor }
  /** The step's effect was accepted externally; wait for the receipt. */
  | { readonly type: 'await_receipt'; readonly actor: Actor }
  /** The attempt failed (thrown error, StepError, or attempt timeout as `timeout`). */
  | {
      readonly type: 'fail';
      readonly actor: Actor;
      readonly category: ErrorCategory;
      readonly summary: string;
      readonly retryAfterMs?: number;
    }
  /** The lease ran out without renewal (the sweeper saw it). */
  | { readonly type: 'lease_expired'; readonly actor: Actor }
  /** Graceful shutdown hands the task back. */
  | { readonly type: 'release'; readonly actor: Actor }
  /** The step reached a side-effect boundary: a pending cancel is confirmed here. */
  | { readonly type: 'boundary'; readonly actor: Actor }
  /** `reason`: the requester's words, kept on the edge's detail. */
  | { readonly type: 'cancel'; readonly actor: Actor; readonly reason?: string }
  | { readonly type: 'receipt_confirmed'; readonly actor: Actor }
  | {
      readonly type: 'receipt_rejected';
      readonly actor: Actor;
      readonly category: ErrorCategory;
      readonly summary: string;
    }
  | { readonly type: 'receipt_timeout'; readonly actor: Actor }
  /** The absolute deadline passed while the task waited in the queue. */
  | { readonly type: 'deadline_passed' }
  | {
      readonly type: 'replay';
      readonly actor: Actor;
      readonly reason: string;
      readonly bulk: boolean;
    };

export type TaskEventType = TaskEvent['type'];

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

export const refusalCodes = [
  /** The event means nothing in this state (e.g. complete a queued task). */
  'not_applicable',
  /** The task is terminal; only operator replay leaves a terminal state. */
  'terminal_state',
  /** A cancel was already requested; repeating it changes nothing. */
  'cancel_already_requested',
  /** The effect was already submitted (awaiting its receipt); a cancel cannot catch it. */
  'effect_already_submitted',
  /** The current attempt already started its effect; it may not be handed back blindly. */
  'effect_started',
  /** The deadline has not passed yet. */
  'deadline_not_reached',
  /** A queued task's `run_at` is still in the future (R4). */
  'not_ready',
  /** The edge table does not allow this actor to take this edge. */
  'actor_not_allowed',
  /** Replay needs an operator name and a reason. */
  'invalid_operator_request',
] as const;
export type RefusalCode = (typeof refusalCodes)[number];

export interface Refusal {
  readonly code: RefusalCode;
  readonly state: TaskState;
  readonly message: string;
}

export type TaskDecision =
  | { readonly ok: true; readonly edge: TaskEdge; readonly next: TaskSnapshot }
  | { readonly ok: false; readonly refusal: Refusal };

export interface DecideInput {
  readonly task: TaskSnapshot;
  readonly policy: RetryPolicy;
  readonly event: TaskEvent;
  /** Database time of the decision. */
  readonly now: Date;
  /** Source of jitter, in [0, 1). */
  readonly random: () => number;
}

const systemActor: Actor = { kind: 'system' };

/**
 * Chooses the edge for an event, or refuses. Never throws on a bad event; every edge it
 * returns is one the edge table allows (it checks before answering).
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
  const next: TaskSnapshot = { ...task, state: decision.to, ...decision.patch };
  const edge: TaskEdge = {
    from: task.state,
    to: decision.to,
    reason: decision.reason,
    actor: formatActor(edgeActor),
    errorCategory: decision.errorCategory ?? null,
    errorSummary: decision.errorSummary ?? null,
    attempt: next.attempt,
    detail: decision.detail ?? null,
  };
  return { ok: true, edge, next };
}

interface Choice {
  readonly ok: true;
  readonly to: TaskState;
  readonly reason: ReasonCode;
  /** Overrides the event's actor (e.g. a claim past the deadline is finalized by the system). */
  readonly actor?: Actor;
  readonly errorCategory?: ErrorCategory;
  readonly errorSummary?: string;
  readonly detail?: Readonly<Record<string, unknown>>;
  readonly patch?: Partial<TaskSnapshot>;
}

type ChoiceOrRefusal = Choice | { readonly ok: false; readonly refusal: Refusal };

function chooseEdge(input: DecideInput): ChoiceOrRefusal {
  const { task, event, now } = input;
  if (isTerminalTaskState(task.state) && event.type !== 'replay') {
    return refuse(
      task,
      'terminal_state',
      `the task is ${task.state}: it never changes again except by operator replay`,
    );
  }
  switch (event.type) {
    case 'promote':
      if (task.state !== 'pending') return notApplicable(task, event.type);
      return choose('queued', 'upstream_succeeded', { patch: { runAt: now } });

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
      if (deadlinePassed(task, now)) {
        return choose('dead', 'deadline_exceeded_before_start', {
          actor: systemActor,
          errorCategory: 'timeout',
          errorSummary: 'the deadline passed before the task started',
          patch: {
            lastErrorCategory: 'timeout',
            lastError: 'deadline passed before start',
            runAt: null,
          },
        });
      }
      return choose('leased', 'lease_acquired', {
        patch: { attempt: task.attempt + 1, effectStarted: false, runAt: null },
      });

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
      return decideFailure(input, event.category, event.summary, event.retryAfterMs ?? 0);

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
      // The attempt did nothing: hand it back without spending the attempt.
      return choose('queued', 'worker_shutdown', {
        patch: { attempt: task.attempt - 1, runAt: now },
      });

    case 'boundary':
      if (task.state === 'cancel_requested') return choose('cancelled', 'cancel_confirmed');
      return notApplicable(task, event.type);

    case 'cancel':
      switch (task.state) {
        case 'pending':
        case 'queued':
          return choose('cancelled', 'cancelled_before_start', {
            patch: { runAt: null },
            ...requesterReason(event.reason),
          });
        case 'leased':
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
      if (task.state !== 'queued') return notApplicable(task, event.type);
      if (!deadlinePassed(task, now)) {
        return refuse(task, 'deadline_not_reached', 'the deadline has not passed yet');
      }
      return choose('dead', 'deadline_exceeded_before_start', {
        errorCategory: 'timeout',
        errorSummary: 'the deadline passed before the task started',
        patch: {
          lastErrorCategory: 'timeout',
          lastError: 'deadline passed before start',
          runAt: null,
        },
      });

    case 'replay':
      if (task.state !== 'dead') return notApplicable(task, event.type);
      if (!event.actor.name || event.reason.trim().length === 0) {
        return refuse(
          task,
          'invalid_operator_request',
          'a replay needs an operator name and a reason',
        );
      }
      // A replay is a human decision: a fresh attempt budget and no inherited deadline.
      return choose('queued', event.bulk ? 'bulk_requeue' : 'manual_replay', {
        detail: { operatorReason: event.reason, replayCount: task.replayCount + 1 },
        patch: {
          attempt: 0,
          effectStarted: false,
          replayCount: task.replayCount + 1,
          runAt: now,
          deadlineAt: null,
        },
      });
    default:
      // Untyped callers (JSON from an API) can send anything: refuse, never throw.
      return refuse(
        task,
        'not_applicable',
        `unknown event ${JSON.stringify((event as { type?: unknown }).type)}`,
      );
  }
}

/** Retry-or-dead is decided here, before the edge is chosen (category, attempts, deadline). */
function decideFailure(
  input: DecideInput,
  category: ErrorCategory,
  summary: string,
  retryAfterMs: number,
): ChoiceOrRefusal {
  const { task } = input;
  if (task.state === 'cancel_requested') {
    if (!isRetryableCategory(category)) return dead('non_retryable_error', category, summary);
    // No further attempt will run, so the cancel is confirmed by the failure itself.
    return choose('cancelled', 'cancel_confirmed', {
      errorCategory: category,
      errorSummary: summary,
      patch: { lastErrorCategory: category, lastError: summary },
    });
  }
  if (task.state !== 'leased') return notApplicable(task, 'fail');
  if (deadlinePassed(task, input.now)) return dead('deadline_exceeded', category, summary);
  if (!isRetryableCategory(category)) return dead('non_retryable_error', category, summary);
  return retryOrDead(input, {
    retryReason: 'retry_scheduled',
    deadReason: 'attempts_exhausted',
    deadlineReason: 'deadline_exceeded',
    category,
    summary,
    retryAfterMs,
  });
}

function decideLeaseExpiry(input: DecideInput): ChoiceOrRefusal {
  const { task, policy } = input;
  const summary = 'the lease expired without renewal (worker stopped or stalled)';
  // Evidence turns "maybe sent" into "sent, outcome to be asked": safe to run again.
  const effectUncertain = !policy.reentrant && task.effectStarted && task.evidence === null;
  if (task.state === 'cancel_requested') {
    // `cancelled` promises no effect happened or will; once one started, even a reentrant
    // step cannot promise that, and it may not run again either: a human decides.
    if (task.effectStarted) return dead('lease_expired_effect_uncertain', 'unknown', summary);
    return choose('cancelled', 'lease_expired', {
      errorCategory: 'unknown',
      errorSummary: summary,
      patch: { lastErrorCategory: 'unknown', lastError: summary },
    });
  }
  if (task.state !== 'leased') return notApplicable(task, 'lease_expired');
  if (effectUncertain) return dead('lease_expired_effect_uncertain', 'unknown', summary);
  const decided = retryOrDead(input, {
    retryReason: 'lease_expired',
    deadReason: 'attempts_exhausted',
    deadlineReason: 'deadline_exceeded',
    category: 'unknown',
    summary,
  });
  // The log says why a non-reentrant step may run again: its effect has evidence (R21).
  return task.evidence !== null && task.effectStarted && decided.to === 'queued'
    ? { ...decided, detail: { ...decided.detail, evidence: task.evidence } }
    : decided;
}

interface RetryOrDead {
  readonly retryReason: ReasonCode;
  /** Reason when the category is not retryable or the attempts are used up. */
  readonly deadReason: ReasonCode;
  /** Reason when the next attempt would start after the deadline (defaults to deadReason). */
  readonly deadlineReason?: ReasonCode;
  readonly category: ErrorCategory;
  readonly summary: string;
  readonly retryAfterMs?: number;
}

/** Another attempt if the category, attempt budget and deadline allow it; dead otherwise. */
function retryOrDead(input: DecideInput, choice: RetryOrDead): Choice {
  const { task, policy, now, random } = input;
  const { retryReason, deadReason, category, summary } = choice;
  if (!isRetryableCategory(category)) return dead(deadReason, category, summary);
  if (task.attempt >= policy.maxAttempts) return dead(deadReason, category, summary);
  const runAt = nextRunAt(task.attempt, policy.backoff, now, random, choice.retryAfterMs ?? 0);
  if (task.deadlineAt !== null && runAt.getTime() >= task.deadlineAt.getTime()) {
    return dead(choice.deadlineReason ?? deadReason, category, summary);
  }
  return choose('queued', retryReason, {
    errorCategory: category,
    errorSummary: summary,
    detail: { runAt: runAt.toISOString() },
    patch: { runAt, effectStarted: false, lastErrorCategory: category, lastError: summary },
  });
}

function dead(reason: ReasonCode, category: ErrorCategory, summary: string): Choice {
  return choose('dead', reason, {
    errorCategory: category,
    errorSummary: summary,
    patch: { runAt: null, lastErrorCategory: category, lastError: summary },
  });
}

function choose(
  to: TaskState,
  reason: ReasonCode,
  rest: Omit<Choice, 'ok' | 'to' | 'reason'> = {},
): Choice {
  return { ok: true, to, reason, ...rest };
}

function deadlinePassed(task: TaskSnapshot, now: Date): boolean {
  return task.deadlineAt !== null && now.getTime() >= task.deadlineAt.getTime();
}

function refuse(
  task: TaskSnapshot,
  code: RefusalCode,
  message: string,
): { ok: false; refusal: Refusal } {
  return { ok: false, refusal: { code, state: task.state, message } };
}

function notApplicable(
  task: TaskSnapshot,
  eventType: TaskEventType,
): { ok: false; refusal: Refusal } {
  return refuse(task, 'not_applicable', `${eventType} does not apply to a ${task.state} task`);
}

/** The requester's reason, when given, as the edge's detail. */
function requesterReason(reason: string | undefined): {
  detail?: Readonly<Record<string, unknown>>;
} {
  return reason === undefined || reason.trim() === ''
    ? {}
    : { detail: { operatorReason: reason.trim() } };
}
