import type { Kysely } from 'kysely';
import type { CausewayDatabase } from '../../db/schema';
import { workerList } from '../../db/workers/worker-list';
import type { WorkerRecord } from '../../db/workers/worker-rows';

/** A registered worker as operators see it (`engine.workers()`, GraphQL `workers`). */
export interface WorkerView extends WorkerRecord {
  /** "1.4.2 (causeway 0.1.0)": the app's version when it gave one, and the engine's. */
  readonly version: string;
}

/** The registry, the most recent heartbeat first; rows past their age-out only with `includeStale`. */
export async function listWorkers(
  db: Kysely<CausewayDatabase>,
  options: { readonly includeStale?: boolean } = {},
): Promise<WorkerView[]> {
  const rows = await workerList(db, { includeStale: options.includeStale === true });
  return rows.map((row) => ({
    ...row,
    version:
      row.appVersion === null
        ? `causeway ${row.engineVersion}`
        : `${row.appVersion} (causeway ${row.engineVersion})`,
  }));
}
