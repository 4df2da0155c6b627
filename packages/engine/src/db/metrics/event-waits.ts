import { sql } from 'kysely';
import { waitingStateSql } from '../task-states';

export interface EventWait {
  /** The event name the tasks wait for (R37). */
  readonly event: string;
  readonly tasks: number;
  /** Seconds since the longest wait of them began. */
  readonly oldestSeconds: number;
}

/** Tasks waiting for an event, by event name, through the partial index sends look waiters up in. */
export const eventWaitsSql = sql`
  select event_name as event, count(*)::int as tasks,
         extract(epoch from causeway_now() - min(wait_since))::float8 as oldest_seconds
    from causeway_tasks
   where state = ${waitingStateSql}
   group by event_name`;

export function eventWaitFromRow(row: {
  event: string;
  tasks: number;
  oldest_seconds: number;
}): EventWait {
  return { event: row.event, tasks: row.tasks, oldestSeconds: Math.max(0, row.oldest_seconds) };
}
