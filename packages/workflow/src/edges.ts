import type { ActorKind } from './actors';
import type { ReasonCode } from './reason-codes';
import type { TaskState } from './states';

/** One row of the edge table: the only task transitions that exist (docs/state-machine.md). */
export interface EdgeRule {
  /** `null` is the creation edge (∅ → state). */
  readonly from: TaskState | null;
  readonly to: TaskState;
  readonly reasons: readonly ReasonCode[];
  readonly actors: readonly ActorKind[];
}

/** The edge table, as data. Anything not listed here is refused and logged nowhere. */
export const taskEdges: readonly EdgeRule[] = Object.freeze([
  { from: null, to: 'queued', reasons: ['submitted'], actors: ['client'] },
  { from: null, to: 'pending', reasons: ['submitted'], actors: ['client'] },
  { from: 'pending', to: 'queued', reasons: ['upstream_succeeded'], actors: ['system'] },
  {
    from: 'pending',
    to: 'cancelled',
    reasons: ['cancelled_before_start'],
    actors: ['client', 'operator'],
  },
  { from: 'queued', to: 'leased', reasons: ['lease_acquired'], actors: ['worker'] },
  {
    from: 'queued',
    to: 'cancelled',
    reasons: ['cancelled_before_start'],
    actors: ['client', 'operator'],
  },
  { from: 'queued', to: 'dead', reasons: ['deadline_exceeded_before_start'], actors: ['system'] },
  { from: 'leased', to: 'succeeded', reasons: ['completed'], actors: ['worker'] },
  {
    from: 'leased',
    to: 'queued',
    reasons: ['retry_scheduled', 'lease_expired', 'worker_shutdown'],
    actors: ['worker', 'sweeper'],
  },
  {
    from: 'leased',
    to: 'dead',
    reasons: [
      'non_retryable_error',
      'attempts_exhausted',
      'lease_expired_effect_uncertain',
      'deadline_exceeded',
    ],
    actors: ['worker', 'sweeper'],
  },
  {
    from: 'leased',
    to: 'awaiting_receipt',
    reasons: ['submitted_awaiting_receipt'],
    actors: ['worker', 'outbox'],
  },
  {
    from: 'leased',
    to: 'cancel_requested',
    reasons: ['cancel_requested'],
    actors: ['client', 'operator'],
  },
  {
    from: 'cancel_requested',
    to: 'cancelled',
    reasons: ['cancel_confirmed', 'lease_expired'],
    actors: ['worker', 'sweeper'],
  },
  {
    from: 'cancel_requested',
    to: 'succeeded',
    reasons: ['cancel_after_submit'],
    actors: ['worker'],
  },
  {
    from: 'cancel_requested',
    to: 'awaiting_receipt',
    reasons: ['cancel_after_submit'],
    actors: ['worker'],
  },
  {
    from: 'cancel_requested',
    to: 'dead',
    reasons: ['lease_expired_effect_uncertain', 'non_retryable_error'],
    actors: ['sweeper', 'worker'],
  },
  {
    from: 'awaiting_receipt',
    to: 'succeeded',
    reasons: ['receipt_confirmed'],
    actors: ['receipt'],
  },
  {
    from: 'awaiting_receipt',
    to: 'queued',
    reasons: ['receipt_rejected', 'receipt_timeout'],
    actors: ['receipt', 'sweeper'],
  },
  {
    from: 'awaiting_receipt',
    to: 'dead',
    reasons: ['receipt_rejected', 'receipt_timeout'],
    actors: ['receipt', 'sweeper'],
  },
  {
    from: 'dead',
    to: 'queued',
    reasons: ['manual_replay', 'bulk_requeue'],
    actors: ['operator'],
  },
] satisfies EdgeRule[]);

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

/** Whether the edge table allows this edge. */
export function isAllowedEdge(
  from: TaskState | null,
  to: TaskState,
  reason: ReasonCode,
  actorKind: ActorKind,
): boolean {
  return findEdgeRule(from, to, reason, actorKind) !== undefined;
}
