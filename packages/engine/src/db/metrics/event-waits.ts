import { sql } from 'kysely';
import { waitingStateSql } from '../task-states';
import type { CountedGroup } from './counted-group';

/** Tasks waiting for an event (R37), by event name, aged since their wait began. */
export type EventWait = CountedGroup<{ readonly event: string }>;

/** Tasks waiting for an event, by event name, through the partial index sends look waiters up in. */
export const eventWaitsSql = sql`
  select event_name as event, count(*)::int as count,
         extract(epoch from causeway_now() - min(wait_since))::float8 as oldest_seconds
    from causeway_tasks
   where state = ${waitingStateSql}
   group by event_name`;
