import type { ActorKind } from './actors';
import type { EdgeEffects } from './edge-effects';
import type { ReasonCode } from './reason-codes';
import type { TaskState } from './states';

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
  { from: null,               to: 'queued',           reasons: ['submitted'],                      actors: ['client'],             lease: 'release', attempt: 'same',   runAt: 'now',     marker: 'reset', receipt: 'clear', replay: 'keep' },
  { from: null,               to: 'pending',          reasons: ['submitted'],                      actors: ['client'],             lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'reset', receipt: 'clear', replay: 'keep' },
  { from: 'pending',          to: 'queued',           reasons: ['upstream_succeeded'],             actors: ['system'],             lease: 'release', attempt: 'same',   runAt: 'now',     marker: 'keep',  receipt: 'clear', replay: 'keep' },
  { from: 'pending',          to: 'cancelled',        reasons: ['cancelled_before_start'],         actors: ['client', 'operator'], lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep' },
  { from: 'queued',           to: 'leased',           reasons: ['lease_acquired'],                 actors: ['worker'],             lease: 'take',    attempt: 'next',   runAt: 'clear',   marker: 'reset', receipt: 'clear', replay: 'keep' },
  { from: 'queued',           to: 'cancelled',        reasons: ['cancelled_before_start'],         actors: ['client', 'operator'], lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep' },
  { from: 'queued',           to: 'dead',             reasons: ['deadline_exceeded_before_start'], actors: ['system'],             lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep' },
  { from: 'leased',           to: 'succeeded',        reasons: ['completed'],                      actors: ['worker'],             lease: 'release', attempt: 'same',   runAt: 'keep',    marker: 'keep',  receipt: 'clear', replay: 'keep' },
  { from: 'leased',           to: 'queued',           reasons: ['retry_scheduled', 'lease_expired'], actors: ['worker', 'sweeper'], lease: 'release', attempt: 'same',   runAt: 'backoff', marker: 'reset', receipt: 'clear', replay: 'keep' },
  { from: 'leased',           to: 'queued',           reasons: ['worker_shutdown'],                actors: ['worker', 'sweeper'],  lease: 'release', attempt: 'refund', runAt: 'now',     marker: 'keep',  receipt: 'clear', replay: 'keep' },
  { from: 'leased',           to: 'dead',             reasons: ['non_retryable_error', 'attempts_exhausted', 'lease_expired_effect_uncertain', 'deadline_exceeded'],
                                                                                                   actors: ['worker', 'sweeper'],  lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep' },
  { from: 'leased',           to: 'awaiting_receipt', reasons: ['submitted_awaiting_receipt'],     actors: ['worker', 'outbox'],   lease: 'release', attempt: 'same',   runAt: 'keep',    marker: 'keep',  receipt: 'await', replay: 'keep' },
  { from: 'leased',           to: 'cancel_requested', reasons: ['cancel_requested'],               actors: ['client', 'operator'], lease: 'keep',    attempt: 'same',   runAt: 'keep',    marker: 'keep',  receipt: 'clear', replay: 'keep' },
  { from: 'cancel_requested', to: 'cancelled',        reasons: ['cancel_confirmed', 'lease_expired'], actors: ['worker', 'sweeper'], lease: 'release', attempt: 'same',  runAt: 'keep',    marker: 'keep',  receipt: 'clear', replay: 'keep' },
  { from: 'cancel_requested', to: 'succeeded',        reasons: ['cancel_after_submit'],            actors: ['worker'],             lease: 'release', attempt: 'same',   runAt: 'keep',    marker: 'keep',  receipt: 'clear', replay: 'keep' },
  { from: 'cancel_requested', to: 'awaiting_receipt', reasons: ['cancel_after_submit'],            actors: ['worker'],             lease: 'release', attempt: 'same',   runAt: 'keep',    marker: 'keep',  receipt: 'await', replay: 'keep' },
  { from: 'cancel_requested', to: 'dead',             reasons: ['lease_expired_effect_uncertain', 'non_retryable_error'],
                                                                                                   actors: ['sweeper', 'worker'],  lease: 'release', attempt: 'same',   runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep' },
  { from: 'awaiting_receipt', to: 'succeeded',        reasons: ['receipt_confirmed'],              actors: ['receipt'],            lease: 'release', attempt: 'same',   runAt: 'keep',    marker: 'keep',  receipt: 'clear', replay: 'keep' },
  { from: 'awaiting_receipt', to: 'queued',           reasons: ['receipt_rejected', 'receipt_timeout'], actors: ['receipt', 'sweeper'], lease: 'release', attempt: 'same', runAt: 'backoff', marker: 'reset', receipt: 'clear', replay: 'keep' },
  { from: 'awaiting_receipt', to: 'dead',             reasons: ['receipt_rejected', 'receipt_timeout'], actors: ['receipt', 'sweeper'], lease: 'release', attempt: 'same', runAt: 'clear',   marker: 'keep',  receipt: 'clear', replay: 'keep' },
  { from: 'dead',             to: 'queued',           reasons: ['manual_replay', 'bulk_requeue'],  actors: ['operator'],           lease: 'release', attempt: 'reset',  runAt: 'now',     marker: 'reset', receipt: 'clear', replay: 'next' },
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

/** The rule that allows `from → to` with `reason` by an actor of `actorKind`, if any. */
export function findEdgeRule(
  from: TaskState | null,
  to: TaskState,
  reason: ReasonCode,
  actorKind: ActorKind,
): EdgeRule | undefined {
  return taskEdges.find(
    (rule) =>
      rule.from === from &&
      rule.to === to &&
      rule.reasons.includes(reason) &&
      rule.actors.includes(actorKind),
  );
}

/** The rule of `from → to` with `reason`, whoever takes it (effects do not depend on the actor). */
export function edgeRuleOf(
  from: TaskState | null,
  to: TaskState,
  reason: ReasonCode,
): EdgeRule | undefined {
  return taskEdges.find(
    (rule) => rule.from === from && rule.to === to && rule.reasons.includes(reason),
  );
}

/** Whether the edge table allows this edge. */
export function isAllowedEdge(
  from: TaskState | null,
  to: TaskState,
  reason: ReasonCode,
  actorKind: ActorKind,
): boolean {
  return findEdgeRule(from, to, reason, actorKind) !== undefined;
}

/** States whose task holds a lease: entered by an edge that takes or keeps one. */
export const leaseHoldingStates: readonly TaskState[] = Object.freeze([
  ...new Set(taskEdges.filter((rule) => rule.lease !== 'release').map((rule) => rule.to)),
]);

/** The state a claim leaves (`run_at` decides when), and the state it enters. */
export const claimRule: EdgeRule = (() => {
  const rules = taskEdges.filter((rule) => rule.lease === 'take');
  if (rules.length !== 1) throw new Error('the edge table must have exactly one claim edge');
  return rules[0] as EdgeRule;
})();

/** The state of a task waiting for its receipt: entered by edges that await one. */
export const receiptAwaitingState: TaskState = (() => {
  const states = new Set(taskEdges.filter((r) => r.receipt === 'await').map((r) => r.to));
  if (states.size !== 1) throw new Error('the edge table must await receipts in one state');
  return [...states][0] as TaskState;
})();

/** The state an operator replay leaves. */
export const replayableState: TaskState = (() => {
  const states = new Set(taskEdges.filter((r) => r.replay === 'next').map((r) => r.from));
  if (states.size !== 1 || states.has(null)) throw new Error('replays must leave one state');
  return [...states][0] as TaskState;
})();
