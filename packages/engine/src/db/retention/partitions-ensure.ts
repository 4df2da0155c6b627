import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * Makes the log's day partitions up to `daysAhead` days past database time (0017's function:
 * under SHARE UPDATE EXCLUSIVE, so log inserts go on; one caller at a time). Returns how many.
 */
export async function transitionPartitionsEnsure(db: Db, daysAhead: number): Promise<number> {
  const { rows } = await sql<{ made: number }>`
    select causeway_transition_partitions_ensure(
      causeway_now() + ${daysAhead} * interval '1 day') as made`.execute(db);
  return rows[0]?.made ?? 0;
}
