import type { Db } from '../database';

/**
 * Every (name, version) a worker served (R54) and retention has not removed (no worker lists
 * it and no kept workflow records it), by name and first service.
 */
export async function versionsServedList(
  db: Db,
): Promise<{ readonly name: string; readonly version: string }[]> {
  return db
    .selectFrom('causeway_workflow_versions')
    .select(['name', 'version'])
    .orderBy('name')
    .orderBy('first_served_at')
    .execute();
}
