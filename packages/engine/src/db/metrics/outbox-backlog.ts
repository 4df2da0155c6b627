import { sql } from 'kysely';

export interface OutboxBacklog {
  readonly channel: string;
  /** Messages not yet delivered nor given up on (R22). */
  readonly messages: number;
  /** Seconds since the oldest of them was written. */
  readonly oldestSeconds: number;
}

/** Undelivered outbox messages by channel, through the dispatcher's partial index on them. */
export const outboxBacklogSql = sql`
  select channel, count(*)::int as messages,
         extract(epoch from causeway_now() - min(created_at))::float8 as oldest_seconds
    from causeway_outbox
   where state = 'pending'
   group by channel`;

export function outboxBacklogFromRow(row: {
  channel: string;
  messages: number;
  oldest_seconds: number;
}): OutboxBacklog {
  return {
    channel: row.channel,
    messages: row.messages,
    oldestSeconds: Math.max(0, row.oldest_seconds),
  };
}
