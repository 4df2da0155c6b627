/**
 * The machine as data: the task and workflow states, the reason codes, the edge table with
 * what each edge does to a task's row, and the promotion and cancel-cascade rules
 * (docs/state-machine.md is generated from this file). A new state or edge is a change here,
 * plus the decision that chooses it (`task-machine.ts`) and, for a workflow state, its row in
 * the aggregation table (`aggregate.ts`).
 */
import type { ActorKind } from './actors';
import type { EdgeEffects } from './edge-effects';

/** Task (child) states (docs/state-machine.md). Each has exactly one meaning. */
export const taskStates = [
  'pending',
  'queued',
  'leased',
  'awaiting_receipt',
  'waiting',
  'awaiting_children',
  'cancel_requested',
  'succeeded',
  'cancelled',
  'dead',
] as const;
export type TaskState = (typeof taskStates)[number];

/** Terminal task states: only the operator edges out of `dead` ever leave one. */
export const terminalTaskStates = [
  'succeeded',
  'cancelled',
  'dead',
] as const satisfies readonly TaskState[];
export type TerminalTaskState = (typeof terminalTaskStates)[number];

/** The states a task can still leave without an operator: every state but the terminal ones. */
export const nonTerminalTaskStates: readonly TaskState[] = Object.freeze(
  taskStates.filter((state) => !(terminalTaskStates as readonly TaskState[]).includes(state)),
);

/** Workflow (parent) states. Always computed from the children, never set directly. */
export const workflowStates = [
  'queued',
  'running',
  'waiting',
  'cancel_requested',
  'succeeded',
  'cancelled',
  'dead',
] as const;
export type WorkflowState = (typeof workflowStates)[number];

export const terminalWorkflowStates = [
  'succeeded',
  'cancelled',
  'dead',
] as const satisfies readonly WorkflowState[];

/** One-line meaning of each task state, used by the generated docs. */
export const taskStateMeanings: Readonly<Record<TaskState, string>> = Object.freeze({
  pending: 'accepted; waits for upstream steps; no worker may take it',
  queued: 'ready; eligible once run_at <= now() (database clock)',
  leased: 'a worker holds the lease and may be executing',
  awaiting_receipt: 'the external submission is accepted; lease released; waiting for the receipt',
  waiting: 'an event step waits for its event; no worker holds it and no side effect is in flight',
  awaiting_children:
    'the step started child workflows; no lease held; it settles by fixed rules once they are terminal',
  cancel_requested:
    'a caller asked to stop while leased or while awaiting children; the worker or the children have not confirmed yet',
  succeeded: 'the side effect is confirmed',
  cancelled: 'confirmed that no further side effect will happen',
  dead: 'out of attempts, non-retryable, or side effect uncertain: needs a human',
});

/**
 * Reason codes (docs/state-machine.md). A published contract: one meaning each, forever (R24).
 * Never reuse a code for a new meaning; add a new one.
 */
export const reasonCodes = [
  'submitted',
  'upstream_succeeded',
  'cancelled_before_start',
  'lease_acquired',
  'deadline_exceeded_before_start',
  'completed',
  'retry_scheduled',
  'lease_expired',
  'worker_shutdown',
  'non_retryable_error',
  'attempts_exhausted',
  'lease_expired_effect_uncertain',
  'deadline_exceeded',
  'submitted_awaiting_receipt',
  'cancel_requested',
  'cancel_confirmed',
  'cancel_after_submit',
  'receipt_confirmed',
  'receipt_rejected',
  'receipt_timeout',
  'manual_replay',
  'bulk_requeue',
  'snoozed',
  'event_awaited',
  'event_received',
  'event_timeout',
  'cancelled_while_waiting',
  'step_input_failed',
  'children_started',
  'children_succeeded',
  'children_failed',
  'children_cancelled',
  'superseded',
] as const;
export type ReasonCode = (typeof reasonCodes)[number];

/** One-line meaning of each reason code, used by the generated docs and by `explain`. */
export const reasonCodeMeanings: Readonly<Record<ReasonCode, string>> = Object.freeze({
  submitted: 'accepted at admission (attempt 0, run now or after upstream steps)',
  upstream_succeeded: 'every upstream step succeeded; the task became ready',
  cancelled_before_start: 'cancelled before any worker took it',
  lease_acquired: 'a worker claimed the task and holds its lease',
  deadline_exceeded_before_start: 'the absolute deadline passed before the task started',
  completed: 'the step finished and its effect is confirmed',
  retry_scheduled: 'the attempt failed with a retryable error; the next attempt waits for run_at',
  lease_expired: 'the lease ran out with no effect at risk; safe to run again or to stop',
  worker_shutdown: 'the worker shut down and released the task before any side effect',
  non_retryable_error: 'the attempt failed with an error category that is never retried',
  attempts_exhausted: 'the last allowed attempt failed',
  lease_expired_effect_uncertain:
    'the lease ran out after a non-reentrant step started its effect: a human must check',
  deadline_exceeded: 'the absolute deadline passed while the task was running or waiting',
  submitted_awaiting_receipt: 'the external submission was accepted; waiting for its receipt',
  cancel_requested: 'a caller asked to stop a running task; the worker must confirm',
  cancel_confirmed: 'the worker confirmed at a side-effect boundary that nothing more will happen',
  cancel_after_submit: 'the cancel came too late: the effect had already been submitted',
  receipt_confirmed: 'the receipt confirmed the external effect',
  receipt_rejected: 'the receipt reported a failure of the external effect',
  receipt_timeout: 'no receipt arrived before its deadline',
  manual_replay: 'an operator replayed a dead task',
  bulk_requeue: 'an operator requeued dead tasks in bulk by reason code and time range',
  snoozed:
    'the step asked to run again later; the attempt is not counted and its checkpoints are kept',
  event_awaited: "an event step's upstream steps all succeeded; it waits for its event",
  event_received: "the step's event arrived; its output is the event's payload",
  event_timeout: 'no event arrived before the wait gave up (the declared default output, if any)',
  cancelled_while_waiting: 'cancelled while waiting for its event',
  step_input_failed:
    "a function the engine evaluates for the step (its event key, a map's list, a child's input) threw or gave an invalid value; the edge's detail has the error",
  children_started:
    'the step started child workflows (startChildren, or a map over its list) and waits for them',
  children_succeeded:
    "every child workflow succeeded, or the failures are within the step's tolerance",
  children_failed:
    'child workflows ended dead or cancelled beyond the tolerance; the unfinished ones are cancelled',
  children_cancelled:
    'every child workflow of a step asked to cancel is terminal, and at least one did not succeed',
  superseded:
    "a debounced submit of the same key replaced this workflow before any of its tasks started; the edge's detail names the new workflow",
});

/**
 * One row of the edge table: an allowed task transition (docs/state-machine.md) and everything
 * it does to the task's row besides the state. Reasons with different effects are rows of
 * their own. An edge with an error category also records it as the task's last error.
 */
export interface EdgeRule extends EdgeEffects {
  /** `null` is the creation edge (∅ → state). */
  readonly from: TaskState | null;
  readonly to: TaskState;
  readonly reasons: readonly ReasonCode[];
  readonly actors: readonly ActorKind[];
}

/**
 * The edge table, as data: the only task transitions that exist. Anything not listed here is
 * refused and logged nowhere. The machine (`decideTaskEdge`) chooses among the rows; the
 * columns after the actors are applied by `nextSnapshot` in memory and by the engine's
 * statements in SQL.
 */
// biome-ignore format: one edge per line, aligned by column, so the table reads as a table
export const taskEdges: readonly EdgeRule[] = Object.freeze([
  { from: null,               to: 'queued',           reasons: ['submitted'],                      actors: ['client', 'schedule', 'parent'], lease: 'release', attempt: 'same',   runAt: 'delay',   marker: 'reset', receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: null,               to: 'pending',          reasons: ['submitted'],                      actors: ['client', 'schedule', 'parent'], lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'reset', receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'pending',          to: 'queued',           reasons: ['upstream_succeeded'],             actors: ['system'],             lease: 'release', attempt: 'same',   runAt: 'delay',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'pending',          to: 'cancelled',        reasons: ['cancelled_before_start'],         actors: ['client', 'operator', 'parent'], lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'queued',           to: 'leased',           reasons: ['lease_acquired'],                 actors: ['worker'],             lease: 'take',    attempt: 'next',   runAt: 'clear',   marker: 'reset', receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'queued',           to: 'cancelled',        reasons: ['cancelled_before_start'],         actors: ['client', 'operator', 'parent'], lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'queued',           to: 'dead',             reasons: ['deadline_exceeded_before_start'], actors: ['system'],             lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'leased',           to: 'succeeded',        reasons: ['completed'],                      actors: ['worker'],             lease: 'release', attempt: 'same',   runAt: 'keep',    marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'leased',           to: 'queued',           reasons: ['retry_scheduled', 'lease_expired'], actors: ['worker', 'sweeper'], lease: 'release', attempt: 'same',   runAt: 'backoff', marker: 'reset', receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'leased',           to: 'queued',           reasons: ['snoozed'],                        actors: ['worker'],             lease: 'release', attempt: 'refund', runAt: 'until',   marker: 'reset', receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'leased',           to: 'queued',           reasons: ['worker_shutdown'],                actors: ['worker', 'sweeper'],  lease: 'release', attempt: 'refund', runAt: 'now',     marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'leased',           to: 'dead',             reasons: ['non_retryable_error', 'attempts_exhausted', 'lease_expired_effect_uncertain', 'deadline_exceeded'],
                                                                                                   actors: ['worker', 'sweeper'],  lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'leased',           to: 'awaiting_receipt', reasons: ['submitted_awaiting_receipt'],     actors: ['worker', 'outbox'],   lease: 'release', attempt: 'same',   runAt: 'keep',    marker: 'keep',  receipt: 'await', replay: 'keep', wait: 'keep'  },
  { from: 'leased',           to: 'cancel_requested', reasons: ['cancel_requested'],               actors: ['client', 'operator', 'parent'], lease: 'keep',    attempt: 'same',   runAt: 'keep',    marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'cancel_requested', to: 'cancelled',        reasons: ['cancel_confirmed', 'lease_expired'], actors: ['worker', 'sweeper'], lease: 'release', attempt: 'same',  runAt: 'keep',    marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'cancel_requested', to: 'succeeded',        reasons: ['cancel_after_submit'],            actors: ['worker', 'system'],             lease: 'release', attempt: 'same',   runAt: 'keep',    marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'cancel_requested', to: 'awaiting_receipt', reasons: ['cancel_after_submit'],            actors: ['worker'],             lease: 'release', attempt: 'same',   runAt: 'keep',    marker: 'keep',  receipt: 'await', replay: 'keep', wait: 'keep'  },
  { from: 'cancel_requested', to: 'dead',             reasons: ['lease_expired_effect_uncertain', 'non_retryable_error'],
                                                                                                   actors: ['sweeper', 'worker'],  lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'awaiting_receipt', to: 'succeeded',        reasons: ['receipt_confirmed'],              actors: ['receipt'],            lease: 'release', attempt: 'same',   runAt: 'keep',    marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'awaiting_receipt', to: 'queued',           reasons: ['receipt_rejected', 'receipt_timeout'], actors: ['receipt', 'sweeper'], lease: 'release', attempt: 'same', runAt: 'backoff', marker: 'reset', receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'awaiting_receipt', to: 'dead',             reasons: ['receipt_rejected', 'receipt_timeout'], actors: ['receipt', 'sweeper'], lease: 'release', attempt: 'same', runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'dead',             to: 'queued',           reasons: ['manual_replay', 'bulk_requeue'],  actors: ['operator'],           lease: 'release', attempt: 'reset',  runAt: 'now',     marker: 'reset', receipt: 'clear', replay: 'next', wait: 'keep'  },
  { from: null,               to: 'waiting',          reasons: ['submitted'],                      actors: ['client', 'schedule', 'parent'], lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'reset', receipt: 'clear', replay: 'keep', wait: 'start' },
  { from: 'pending',          to: 'waiting',          reasons: ['event_awaited'],                  actors: ['system'],             lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'start' },
  { from: 'waiting',          to: 'succeeded',        reasons: ['event_received', 'event_timeout'], actors: ['client', 'operator', 'sweeper'], lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'clear' },
  { from: 'waiting',          to: 'dead',             reasons: ['event_timeout', 'deadline_exceeded'], actors: ['sweeper'],        lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'clear' },
  { from: 'waiting',          to: 'cancelled',        reasons: ['cancelled_while_waiting'],        actors: ['client', 'operator', 'parent'], lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'clear' },
  { from: 'dead',             to: 'waiting',          reasons: ['manual_replay', 'bulk_requeue'],  actors: ['operator'],           lease: 'release', attempt: 'reset',  runAt: 'clear',   marker: 'reset', receipt: 'clear', replay: 'next', wait: 'start' },
  { from: 'pending',          to: 'dead',             reasons: ['step_input_failed'],              actors: ['system'],             lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'leased',           to: 'awaiting_children', reasons: ['children_started'],              actors: ['worker'],             lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'pending',          to: 'awaiting_children', reasons: ['children_started'],              actors: ['system'],             lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'awaiting_children', to: 'succeeded',       reasons: ['children_succeeded'],             actors: ['system'],             lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'awaiting_children', to: 'dead',            reasons: ['children_failed'],                actors: ['system'],             lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'awaiting_children', to: 'dead',            reasons: ['deadline_exceeded'],              actors: ['sweeper'],            lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'awaiting_children', to: 'cancel_requested', reasons: ['cancel_requested'],              actors: ['client', 'operator', 'parent'], lease: 'keep',    attempt: 'same',   runAt: 'keep',    marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'cancel_requested', to: 'cancelled',        reasons: ['children_cancelled'],             actors: ['system'],             lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'dead',             to: 'awaiting_children', reasons: ['manual_replay', 'bulk_requeue'], actors: ['operator'],           lease: 'release', attempt: 'reset',  runAt: 'clear',   marker: 'reset', receipt: 'clear', replay: 'next', wait: 'keep'  },
  { from: 'pending',          to: 'cancelled',        reasons: ['superseded'],                     actors: ['client'],             lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
  { from: 'queued',           to: 'cancelled',        reasons: ['superseded'],                     actors: ['client'],             lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep', wait: 'keep'  },
] satisfies EdgeRule[]);

/**
 * Promotion: a task in `from` whose every `after` step is in `upstreamState` takes the edge of
 * the `promote` event. Read by the full decision (`promotableTasks`), the one-statement settle
 * and the docs.
 */
export const promotionRule = Object.freeze({
  from: 'pending',
  upstreamState: 'succeeded',
} as const satisfies { readonly from: TaskState; readonly upstreamState: TaskState });

/**
 * Cancel cascade: a task in `from` with an `after` step in one of `upstreamStates` can never
 * run, and takes the edge of a `cancel` event by the same requester.
 */
export const cancelCascadeRule = Object.freeze({
  from: 'pending',
  upstreamStates: ['cancelled', 'cancel_requested'],
} as const satisfies { readonly from: TaskState; readonly upstreamStates: readonly TaskState[] });
