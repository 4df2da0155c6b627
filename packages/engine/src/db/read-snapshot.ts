import type { Kysely, Transaction } from 'kysely';
import type { CausewayDatabase } from './schema';

/** Several reads that must agree with each other: one read-only repeatable-read snapshot. */
export function inOneSnapshot<T>(
  db: Kysely<CausewayDatabase>,
  read: (tx: Transaction<CausewayDatabase>) => Promise<T>,
): Promise<T> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(read);
}
