import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { CausewayDatabase } from '../schema';
import { retentionDeleteAllow } from './retention-delete-allow';

/**
 * The statement of one batch: up to `limit` events that no kept workflow needs, with their
 * remaining deliveries (all of workflows already removed). An event goes when
 * - it was received before the cutoff (an event nobody took is kept that long for later
 *   waits, R38), and
 * - it was received before the oldest remaining workflow was accepted: a wait takes only
 *   events received after its workflow was accepted (R37), so no remaining workflow, live or
 *   replayed later, could take it; and
 * - no remaining workflow received it (a delivery whose workflow is still there).
 * The oldest first, read off `causeway_events_received` (0022) up to the bound; a delivery is
 * found by its primary key's `event_id` and its workflow by the workflows' primary key.
 */
export function eventDeleteBatchSql(
  cutoff: Date,
  limit: number,
): RawBuilder<{ events: string; deliveries: string }> {
  return sql<{ events: string; deliveries: string }>`
    with bound as materialized (
      select least(${cutoff}::timestamptz,
                   (select min(created_at) from causeway_workflows)) as at
    ), doomed as materialized (
      select e.id from causeway_events as e
       where e.received_at < (select at from bound)
         and not exists (select 1 from causeway_event_deliveries as d
                          join causeway_workflows as w on w.id = d.workflow_id
                         where d.event_id = e.id)
       order by e.received_at
       limit ${limit}
       for update of e skip locked
    ), deliveries as (
      delete from causeway_event_deliveries
       where event_id = any(array(select id from doomed)) returning 1
    ), events as (
      delete from causeway_events where id = any(array(select id from doomed)) returning 1
    )
    select (select count(*) from events) as events,
           (select count(*) from deliveries) as deliveries`;
}

/** Runs one batch in its own transaction (which lets the append-only trigger through). */
export async function eventDeleteBatch(
  db: Kysely<CausewayDatabase>,
  cutoff: Date,
  limit: number,
): Promise<{ events: number; deliveries: number }> {
  return db.transaction().execute(async (tx) => {
    await retentionDeleteAllow(tx);
    const { rows } = await eventDeleteBatchSql(cutoff, limit).execute(tx);
    const row = rows[0] as { events: string; deliveries: string };
    return { events: Number(row.events), deliveries: Number(row.deliveries) };
  });
}
