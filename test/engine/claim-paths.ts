import type { Engine } from '@causeway/engine';
import type { Kysely, Transaction } from 'kysely';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { claimInFull } from '../../packages/engine/src/runtime/claim/claim-in-full';
import { claimReadyTasks } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import type { ClaimResult } from '../../packages/engine/src/runtime/claim/claimed-task';
import type { ApplyContext } from '../../packages/engine/src/runtime/decision/event-request';

/** The two ways a claim is decided: the one statement a worker runs, or in full (the machine). */
export type ClaimPath = 'one statement' | 'in full';

/** A claim of up to `limit` tasks on `db`: a transaction, or the pool (then its own). */
export type Claim = (
  db: Kysely<CausewayDatabase> | Transaction<CausewayDatabase>,
  limit: number,
) => Promise<ClaimResult>;

/** A claim of `queue` by `cw`'s holder with the definitions of `context`, on `path`. */
export function claimOf(
  path: ClaimPath,
  cw: Engine,
  queue: string,
  context: () => ApplyContext,
): Claim {
  return (db, limit) => {
    const request = { queue, limit, holder: cw.holder };
    if (path === 'one statement') return claimReadyTasks(db, context(), request);
    return db.isTransaction
      ? claimInFull(db as Transaction<CausewayDatabase>, context(), request)
      : (db as Kysely<CausewayDatabase>)
          .transaction()
          .execute((tx) => claimInFull(tx, context(), request));
  };
}
