import { claimRule, nonTerminalTaskStates, type TaskState } from '@causeway/workflow/internal';
import { type RawBuilder, sql } from 'kysely';
import { readyHalves } from '../claim/claim-order';
import type { CountedGroup } from './counted-group';

/** Live tasks of a state and queue, aged since the longest-standing entered the state. */
export type TaskStateCount = CountedGroup<{ readonly state: TaskState; readonly queue: string }>;

/**
 * Live tasks by state and queue. One arm per state, each with the state as a literal, so each
 * is served by that state's partial index (ready, lease expiry, receipt deadline, waiting,
 * pending) and costs the live rows of that state, however many finished rows the table holds.
 * A task row's `updated_at` is the time of its last edge: every statement that writes a state
 * sets it, renewals and checkpoints do not.
 */
export const taskStateCountsSql = sql.join(
  nonTerminalTaskStates.map((state) =>
    state === claimRule.from
      ? // Queued rows live in two partial indexes, plain and keyed (R50): one arm each.
        sql`
      select state, queue, sum(count)::int as count, max(oldest_seconds) as oldest_seconds
        from (${sql.join(
          readyHalves.map((half) => stateArm(state, half)),
          sql` union all `,
        )}) as halves
       group by state, queue`
      : stateArm(state, sql`true`),
  ),
  sql` union all `,
);

function stateArm(state: TaskState, condition: RawBuilder<unknown>) {
  return sql`
      select ${sql.lit(state)}::text as state, queue, count(*)::int as count,
             extract(epoch from causeway_now() - min(updated_at))::float8 as oldest_seconds
        from causeway_tasks
       where state = ${sql.lit(state)} and ${condition}
       group by queue`;
}
