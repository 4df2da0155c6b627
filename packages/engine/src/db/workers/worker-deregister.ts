import type { Db } from '../database';

/** Removes the engine's registry row: its last worker stopped cleanly (R31). */
export async function workerDeregister(db: Db, holder: string): Promise<void> {
  await db.deleteFrom('causeway_workers').where('holder', '=', holder).execute();
}
