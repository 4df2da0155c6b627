import { sql, type Transaction } from 'kysely';
import type { CausewayDatabase } from '../schema';

/**
 * Drops one log partition if no workflow of its range remains, in the caller's transaction.
 * DROP takes ACCESS EXCLUSIVE on the log's parent: every log insert waits while it is held, and
 * so does everything queued behind a waiting DROP, so the lock is asked for with a short
 * timeout (the caller retries later) and held only for the check and the drop. Under that lock
 * no transaction can be writing log rows, so a workflow inserted in the range meanwhile is seen
 * here and keeps the partition.
 */
export async function partitionDropIfEmpty(
  tx: Transaction<CausewayDatabase>,
  partition: { readonly name: string; readonly lowerId: string | null; readonly upperId: string },
  lockTimeoutMs: number,
): Promise<'dropped' | 'workflows_remain' | 'gone'> {
  await sql`select set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`.execute(tx);
  await sql`lock table causeway_transitions in access exclusive mode`.execute(tx);
  const { rows } = await sql<{ present: boolean; remains: boolean }>`
    select to_regclass(${partition.name}) is not null as present, exists (
      select 1 from causeway_workflows as w
       where (${partition.lowerId}::uuid is null or w.id >= ${partition.lowerId}::uuid)
         and w.id < ${partition.upperId}::uuid) as remains`.execute(tx);
  // Another run dropped it while this one waited for the lock.
  if (rows[0]?.present !== true) return 'gone';
  if (rows[0]?.remains === true) return 'workflows_remain';
  await sql`drop table ${sql.table(partition.name)}`.execute(tx);
  return 'dropped';
}
