import {
  claimRule,
  eventWaitingState,
  leaseHoldingStates,
  receiptAwaitingState,
  replayableState,
  terminalTaskStates,
} from '@causeway/workflow/internal';
import { sql } from 'kysely';

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
/** A task an operator may replay. */
export const replayableStateSql = sql.lit(replayableState);
/** Terminal states, as a list for `in (…)` / `not in (…)`. */
export const terminalStatesSql = sql.join(terminalTaskStates.map((state) => sql.lit(state)));
