import { sql } from 'kysely';
import type { Db } from '../database';
import type { WorkerRegistration } from './worker-rows';

/**
 * Writes the engine's registry row: inserted when its first worker starts, rewritten when its
 * workers change (or when a heartbeat found the row gone). Keeps `started_at` of a row that
 * exists; heartbeat and age-out restart from database now.
 */
export async function workerRegister(
  db: Db,
  registration: WorkerRegistration,
  ageOutMs: number,
): Promise<void> {
  await sql`
    insert into causeway_workers (holder, host, pid, queues, workflows, sweeper, engine_version,
      app_version, started_at, heartbeat_at, stale_at)
    values (${registration.holder}, ${registration.host}, ${registration.pid},
      ${JSON.stringify(registration.queues)}::jsonb, ${JSON.stringify(registration.workflows)}::jsonb,
      ${registration.sweeper}, ${registration.engineVersion}, ${registration.appVersion},
      causeway_now(), causeway_now(), causeway_now() + ${ageOutMs} * interval '1 millisecond')
    on conflict (holder) do update set
      queues = excluded.queues,
      workflows = excluded.workflows,
      sweeper = excluded.sweeper,
      engine_version = excluded.engine_version,
      app_version = excluded.app_version,
      heartbeat_at = excluded.heartbeat_at,
      stale_at = excluded.stale_at`.execute(db);
}
