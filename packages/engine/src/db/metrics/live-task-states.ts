import { nonTerminalTaskStates, type TaskState } from '@causeway/workflow/internal';
import { sql } from 'kysely';
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
  nonTerminalTaskStates.map(
    (state) => sql`
      select ${sql.lit(state)}::text as state, queue, count(*)::int as count,
             extract(epoch from causeway_now() - min(updated_at))::float8 as oldest_seconds
        from causeway_tasks
       where state = ${sql.lit(state)}
       group by queue`,
  ),
  sql` union all `,
);
