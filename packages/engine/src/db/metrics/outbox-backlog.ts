import { sql } from 'kysely';
import type { CountedGroup } from './counted-group';

/** Outbox messages not yet delivered nor given up on (R22), by channel, aged since written. */
export type OutboxBacklog = CountedGroup<{ readonly channel: string }>;

/** Undelivered outbox messages by channel, through the dispatcher's partial index on them. */
export const outboxBacklogSql = sql`
  select channel, count(*)::int as count,
         extract(epoch from causeway_now() - min(created_at))::float8 as oldest_seconds
    from causeway_outbox
   where state = 'pending'
   group by channel`;
