import type { Db } from '../database';

/** Every (name, version) a worker ever served (R54), by name and first service. */
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
