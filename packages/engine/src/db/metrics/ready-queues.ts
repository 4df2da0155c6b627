import { sql } from 'kysely';
import { readyStateSql } from '../task-states';
import type { CountedGroup } from './counted-group';

/**
 * Queued tasks whose `run_at` is due (what a worker could claim now), by queue; their age is
 * the time since the longest-due of them became due.
 */
export type ReadyQueue = CountedGroup<{ readonly queue: string }>;

/** The ready (due) tasks of each queue, through the claim's own partial index on ready rows. */
export const readyQueuesSql = sql`
  select queue, count(*)::int as count,
         extract(epoch from causeway_now() - min(run_at))::float8 as oldest_seconds
    from causeway_tasks
   where state = ${readyStateSql} and run_at <= causeway_now()
   group by queue`;
