import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely, Transaction } from 'kysely';
import { isConflictError } from '../../db/pg-errors';
import type { CausewayDatabase } from '../../db/schema';
import { transactionRecordingWaits } from '../tracing/committed-wait-spans';
import type { WaitSpanContext } from '../tracing/event-spans';

/**
 * Waits before each new try of an operation's transaction. A deadlock or serialization failure
 * clears as soon as the other transaction ends; the decisions it meets are short.
 */
const conflictRetryDelaysMs = [5, 20, 100, 250, 500];

/**
 * Runs an operation's transaction, trying it again when PostgreSQL aborted it for a conflict
 * (a deadlock, a serialization failure, a lock timeout): the work is decided anew on the rows
 * as they are then. A child workflow's end locks the child, then its parent; a cancel of the
 * parent locks the parent, then its children: the deadlock these make must delay the caller's
 * operation, never fail it. Other errors, and a conflict that outlasts the tries, are thrown.
 */
export async function transactionRetried<T>(
  context: WaitSpanContext & { readonly db: Kysely<CausewayDatabase> },
  run: (tx: Transaction<CausewayDatabase>) => Promise<T>,
): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await transactionRecordingWaits(context, run);
    } catch (error) {
      const delayMs = conflictRetryDelaysMs[attempt];
      if (delayMs === undefined || !isConflictError(error)) throw error;
      await sleep(delayMs);
    }
  }
}
