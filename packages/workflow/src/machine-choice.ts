import type { Actor } from './actors';
import type { ErrorCategory } from './error-categories';
import type { ReasonCode, TaskState } from './machine-table';
import type { RetryPolicy } from './retry-policy';
import type { StepInputProblem } from './step-input';
import type { TaskEvent, TaskEventType } from './task-events';
import type { TaskSnapshot } from './task-snapshot';

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
  /** A wait's timeout has not passed yet. */
  'wait_not_expired',
  /** A function the engine evaluates for the step still throws or gives an invalid value (R58). */
  'step_input_failed',
  /** A step's child workflows are not all terminal and the failures are within tolerance. */
  'children_pending',
  /** A task that was ever claimed is started: a debounced submit may not supersede it (R52). */
  'already_started',
] as const;
export type RefusalCode = (typeof refusalCodes)[number];

export interface Refusal {
  readonly code: RefusalCode;
  readonly state: TaskState;
  readonly message: string;
}

/**
 * The machine's choice of edge, before the edge table's effects are applied: the target and
 * reason pick the row; the rest is what only the decision knows.
 */
export interface Choice {
  readonly ok: true;
  readonly to: TaskState;
  readonly reason: ReasonCode;
  /** Overrides the event's actor (e.g. a claim past the deadline is finalized by the system). */
  readonly actor?: Actor;
  readonly errorCategory?: ErrorCategory;
  readonly errorSummary?: string;
  readonly detail?: Readonly<Record<string, unknown>>;
  /** When the task may be claimed, for a row whose `runAt` is `delay`, `backoff` or `until`. */
  readonly runAt?: Date;
  /** When the wait gives up, for a row whose `wait` is `start`. */
  readonly waitTimeoutAt?: Date;
}

export type Refused = { readonly ok: false; readonly refusal: Refusal };
export type ChoiceOrRefusal = Choice | Refused;

export function choose(
  to: TaskState,
  reason: ReasonCode,
  rest: Omit<Choice, 'ok' | 'to' | 'reason'> = {},
): Choice {
  return { ok: true, to, reason, ...rest };
}

export function dead(reason: ReasonCode, category: ErrorCategory, summary: string): Choice {
  return choose('dead', reason, { errorCategory: category, errorSummary: summary });
}

export function refuse(task: TaskSnapshot, code: RefusalCode, message: string): Refused {
  return { ok: false, refusal: { code, state: task.state, message } };
}

export function notApplicable(task: TaskSnapshot, eventType: TaskEventType): Refused {
  return refuse(task, 'not_applicable', `${eventType} does not apply to a ${task.state} task`);
}

export function deadlinePassed(task: TaskSnapshot, now: Date): boolean {
  return task.deadlineAt !== null && now.getTime() >= task.deadlineAt.getTime();
}

/** The requester's reason, when given, as the edge's detail. */
export function requesterReason(reason: string | undefined): {
  detail?: Readonly<Record<string, unknown>>;
} {
  return reason === undefined || reason.trim() === ''
    ? {}
    : { detail: { operatorReason: reason.trim() } };
}

export interface DecideInput {
  readonly task: TaskSnapshot;
  readonly policy: RetryPolicy;
  readonly event: TaskEvent;
  /** Database time of the decision. */
  readonly now: Date;
  /** Source of jitter, in [0, 1). */
  readonly random: () => number;
  /**
   * For a promotion or replay into `waiting`: what the step's event key gave wrong, as the
   * engine evaluated it (R58); absent or null when it gave a valid key.
   */
  readonly inputProblem?: StepInputProblem | null;
  /**
   * The step started child workflows (R43): a replay awaits them again (R47), and under a
   * cancel request it holds no lease, so only its children's tally or a cancel applies.
   */
  readonly hasChildren?: boolean;
}

/** The wait an edge into `waiting` starts now, with its timeout (R39). */
export function waitFrom(input: DecideInput): { waitTimeoutAt?: Date } {
  if (input.policy.wait === null) return {};
  return { waitTimeoutAt: new Date(input.now.getTime() + input.policy.wait.timeoutMs) };
}
