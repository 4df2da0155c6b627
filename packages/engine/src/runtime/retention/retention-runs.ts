import type { Db } from '../../db/database';
import { type RetentionRunRecord, retentionRunList } from '../../db/retention/retention-run-record';
import { EngineError } from '../../errors';

/** One recorded retention run: who ran it, when, why, and what it removed and left. */
export type RetentionRun = RetentionRunRecord & { readonly id: string; readonly finishedAt: Date };

export async function retentionRuns(
  db: Db,
  options: { limit?: number } = {},
): Promise<RetentionRun[]> {
  const limit = options.limit ?? 20;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) {
    throw new EngineError('invalid_request', 'limit must be a whole number from 1 to 1000', {
      field: 'limit',
    });
  }
  return retentionRunList(db, limit);
}
