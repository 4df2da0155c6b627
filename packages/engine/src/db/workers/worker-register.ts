import { sql } from 'kysely';
import type { Db } from '../database';
import type { WorkerRegistration } from './worker-rows';

/**
 * Writes the engine's registry row: inserted when its first worker starts, rewritten when its
 * workers change (or when a heartbeat found the row gone). Keeps `started_at` of a row that
 * exists; heartbeat and age-out restart from database now. In the same statement, each
 * version the row lists is recorded as served (R54), so it stays listed once drained.
 */
export async function workerRegister(
  db: Db,
  registration: WorkerRegistration,
  ageOutMs: number,
): Promise<void> {
  const workflows = JSON.stringify(registration.workflows);
  await sql`
    with served as (
      insert into causeway_workflow_versions (name, version, first_served_at, last_served_at)
      select w ->> 'name', w ->> 'version', causeway_now(), causeway_now()
      from jsonb_array_elements(${workflows}::jsonb) as w
      where w ? 'version'
      on conflict (name, version) do update set last_served_at = excluded.last_served_at
    )
    insert into causeway_workers (holder, host, pid, queues, workflows, sweeper, engine_version,
      app_version, started_at, heartbeat_at, stale_at)
    values (${registration.holder}, ${registration.host}, ${registration.pid},
      ${JSON.stringify(registration.queues)}::jsonb, ${workflows}::jsonb,
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
