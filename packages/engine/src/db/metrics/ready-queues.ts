import { sql } from 'kysely';
import { readyHalves } from '../claim/claim-order';
import { readyStateSql } from '../task-states';
import type { CountedGroup } from './counted-group';

/**
 * Queued tasks whose `run_at` is due (what a worker could claim now), by queue; their age is
 * the time since the longest-due of them became due.
 */
export type ReadyQueue = CountedGroup<{ readonly queue: string }>;

/** The ready (due) tasks of each queue, through the claim's own partial indexes on ready rows. */
export const readyQueuesSql = sql`
  select queue, sum(count)::int as count,
         extract(epoch from causeway_now() - min(oldest))::float8 as oldest_seconds
    from (${sql.join(
      readyHalves.map(
        (half) => sql`select queue, count(*) as count, min(run_at) as oldest
    from causeway_tasks
   where state = ${readyStateSql} and ${half} and run_at <= causeway_now()
   group by queue`,
      ),
      sql` union all `,
    )}) as halves
   group by queue`;
