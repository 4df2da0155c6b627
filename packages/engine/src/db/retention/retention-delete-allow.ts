import { sql, type Transaction } from 'kysely';
import type { CausewayDatabase } from '../schema';

/**
 * Lets the events' and deliveries' append-only trigger (0022) pass this transaction's deletes:
 * only retention's statements run after it. Local to the transaction, so it ends with it.
 */
export async function retentionDeleteAllow(tx: Transaction<CausewayDatabase>): Promise<void> {
  await sql`select set_config('causeway.retention_run', 'on', true)`.execute(tx);
}
