import { sql } from 'kysely';
import { readyStateSql } from '../task-states';

export interface ReadyQueue {
  readonly queue: string;
  /** Queued tasks whose `run_at` is due: what a worker could claim now. */
  readonly tasks: number;
  /** Seconds since the longest-due of them became due. */
  readonly oldestSeconds: number;
}

/** The ready (due) tasks of each queue, through the claim's own partial index on ready rows. */
export const readyQueuesSql = sql`
  select queue, count(*)::int as tasks,
         extract(epoch from causeway_now() - min(run_at))::float8 as oldest_seconds
    from causeway_tasks
   where state = ${readyStateSql} and run_at <= causeway_now()
   group by queue`;

export function readyQueueFromRow(row: {
  queue: string;
  tasks: number;
  oldest_seconds: number;
}): ReadyQueue {
  return { queue: row.queue, tasks: row.tasks, oldestSeconds: Math.max(0, row.oldest_seconds) };
}
