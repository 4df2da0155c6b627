import { sql } from 'kysely';
import type { Db } from './database';

/** Database time (R11): `now()` plus the test-only offset. */
export async function databaseNow(db: Db): Promise<Date> {
  const { rows } = await sql<{ now: Date }>`select causeway_now() as now`.execute(db);
  return (rows[0] as { now: Date }).now;
}

/** Moves database time for tests (R11); 0 in production. */
export async function clockSetOffset(db: Db, offsetMs: number): Promise<void> {
  await db.updateTable('causeway_clock').set({ offset_ms: offsetMs }).execute();
}
