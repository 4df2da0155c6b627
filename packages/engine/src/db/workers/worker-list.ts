import { type Selectable, sql } from 'kysely';
import type { Db } from '../database';
import type { WorkerTable } from '../schema';
import { type WorkerRecord, workerFromRow } from './worker-rows';

/**
 * Registry rows, the most recent heartbeat first: the live ones (within their own age-out),
 * plus the rows of `holders` live or not (a lease's holder), or every row with `includeStale`.
 * Live rows come through the `stale_at` index and holders through the primary key.
 */
export async function workerList(
  db: Db,
  options: { readonly includeStale: boolean; readonly holders?: readonly string[] },
): Promise<WorkerRecord[]> {
  const holders = [...new Set(options.holders ?? [])];
  const { rows } = await sql<Selectable<WorkerTable> & { live: boolean }>`
    select *, stale_at > causeway_now() as live from causeway_workers
    where ${
      options.includeStale
        ? sql`true`
        : sql`stale_at > causeway_now() or holder = any(${holders}::text[])`
    }
    order by heartbeat_at desc, holder`.execute(db);
  return rows.map(workerFromRow);
}
