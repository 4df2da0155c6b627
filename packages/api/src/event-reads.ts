import type { CausewayDatabase, StoredEvent } from '@causeway/engine';
import { type Kysely, sql } from 'kysely';

/**
 * Reads of the events delivered to tasks (R38), batched like the engine's ReadModel: one SQL
 * statement per batch of task ids, so a page of tasks with their events costs one query.
 */
export interface EventReads {
  /** Each task's delivered events, oldest delivery first; tasks without any map to nothing. */
  eventsByTaskIds(ids: readonly string[]): Promise<ReadonlyMap<string, readonly StoredEvent[]>>;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The batched form of the engine's `eventsOfTask` (same tables, same order). It lives here
 * until the engine's ReadModel has an `eventsByTaskIds` of its own; then this becomes that.
 */
export function createEventReads(db: Kysely<CausewayDatabase>): EventReads {
  return {
    async eventsByTaskIds(ids) {
      const groups = new Map<string, StoredEvent[]>();
      const wanted = [...new Set(ids.filter((id) => uuidPattern.test(id)))];
      if (wanted.length === 0) return groups;
      const rows = await db
        .selectFrom('causeway_event_deliveries as d')
        .innerJoin('causeway_events as e', 'e.id', 'd.event_id')
        .select([
          'd.task_id',
          'e.id',
          'e.name',
          'e.key',
          'e.payload',
          'e.idempotency_key',
          'e.sent_by',
          'e.received_at',
        ])
        .where(sql<boolean>`d.task_id = any(${wanted}::uuid[])`)
        .orderBy('d.task_id')
        .orderBy('d.delivered_at')
        .orderBy('e.id')
        .execute();
      for (const row of rows) {
        const event: StoredEvent = {
          id: row.id,
          name: row.name,
          key: row.key,
          payload: row.payload,
          idempotencyKey: row.idempotency_key,
          sentBy: row.sent_by,
          receivedAt: row.received_at,
        };
        const group = groups.get(row.task_id);
        if (group === undefined) groups.set(row.task_id, [event]);
        else group.push(event);
      }
      return groups;
    },
  };
}
