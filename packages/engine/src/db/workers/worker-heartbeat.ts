import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * One heartbeat: moves this holder's `heartbeat_at` to database now and its `stale_at` one
 * age-out later, and prunes rows that have been stale for `pruneAfterMs` (other holders only),
 * so the registry stays bounded however often processes restart. False when the row is gone
 * (pruned after a long outage, or never written): the caller registers again.
 */
export async function workerHeartbeat(
  db: Db,
  holder: string,
  ageOutMs: number,
  pruneAfterMs: number,
): Promise<boolean> {
  const { rows } = await sql<{ holder: string }>`
    with pruned as (
      delete from causeway_workers
      where stale_at < causeway_now() - ${pruneAfterMs} * interval '1 millisecond'
        and holder <> ${holder}
    )
    update causeway_workers
    set heartbeat_at = causeway_now(),
        stale_at = causeway_now() + ${ageOutMs} * interval '1 millisecond'
    where holder = ${holder}
    returning holder`.execute(db);
  return rows.length > 0;
}
