import {
  childrenAwaitingState,
  claimRule,
  eventWaitingState,
  leaseHoldingStates,
  promotionRule,
  receiptAwaitingState,
  replayableState,
  slotHoldingStates,
  taskEdges,
  terminalTaskStates,
} from '@causeway/workflow/internal';
import { type RawBuilder, sql } from 'kysely';

/**
 * Task states as SQL literals, read off the edge table rather than typed into statements.
 * Literals, not parameters: the planner must see them to use the partial indexes on them.
 */

/** A task a claim may take once its `run_at` is due (the claim edge's `from`). */
export const readyStateSql = sql.lit(claimRule.from as string);
/** A task whose claim is running (the claim edge's `to`): the state renewals keep. */
export const claimedStateSql = sql.lit(claimRule.to);
/** States whose task holds a lease, as a list for `in (…)`. */
export const leaseHoldingStatesSql = sql.join(leaseHoldingStates.map((state) => sql.lit(state)));
/** A task waiting for its receipt. */
export const receiptAwaitingStateSql = sql.lit(receiptAwaitingState);
/** An event step waiting for its event (R37). */
export const waitingStateSql = sql.lit(eventWaitingState);
/** A task a caller asked to stop, not yet confirmed (`cancel_requested`). */
export const cancelRequestedStateSql = sql.lit(
  (() => {
    const states = new Set(
      taskEdges.filter((rule) => rule.reasons.includes('cancel_requested')).map((rule) => rule.to),
    );
    if (states.size !== 1) throw new Error('the edge table must ask cancels in one state');
    return [...states][0] as string;
  })(),
);
/** A step awaiting its child workflows (R43). */
export const childrenAwaitingStateSql = sql.lit(childrenAwaitingState);
/** A task an operator may replay. */
export const replayableStateSql = sql.lit(replayableState);
/** Terminal states, as a list for `in (…)` / `not in (…)`. */
export const terminalStatesSql = sql.join(terminalTaskStates.map((state) => sql.lit(state)));
/** The one terminal state a child counts as a success by (R45): the promotion's upstream state. */
export const succeededStateSql = sql.lit(promotionRule.upstreamState);
/** The terminal states a child counts as a failure by (R45): every other terminal state. */
export const failedStatesSql = sql.join(
  terminalTaskStates
    .filter((state) => state !== promotionRule.upstreamState)
    .map((state) => sql.lit(state)),
);

/**
 * Whether task `t` holds its concurrency key's slot (R50, `slotHoldingStates`): a
 * `cancel_requested` task only while it keeps the lease it had as `leased`. The plain list
 * is the slot holders' partial index's condition (migration 0030).
 */
export function slotHoldingSql(task: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`${task}.state in (${sql.join(slotHoldingStates.map((state) => sql.lit(state)))})
    and (${task}.state <> ${cancelRequestedStateSql} or ${task}.lease_holder is not null)`;
}
