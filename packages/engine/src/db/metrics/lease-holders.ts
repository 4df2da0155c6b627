import { sql } from 'kysely';
import { leaseHoldingStatesSql } from '../task-states';
import { type CountedGroup, countedGroupFromRow } from './counted-group';

/**
 * The lease-holding tasks of a holder (host/pid/boot id of an engine, R7), aged since the
 * oldest lease was taken (or its task asked to cancel).
 */
export type LeaseHolder = CountedGroup<{ readonly holder: string }> & {
  /**
   * Seconds until its first lease runs out; below zero once one has run out and the sweeper
   * has not yet decided it. A holder that stopped renewing counts down to it.
   */
  readonly nextExpirySeconds: number;
};

/** Lease-holding tasks by holder, through the partial index the sweeper reads expiries from. */
export const leaseHoldersSql = sql`
  select lease_holder as holder, count(*)::int as count,
         extract(epoch from causeway_now() - min(updated_at))::float8 as oldest_seconds,
         extract(epoch from min(lease_expires_at) - causeway_now())::float8 as next_expiry_seconds
    from causeway_tasks
   where state in (${leaseHoldingStatesSql}) and lease_holder is not null
   group by lease_holder`;

export function leaseHolderFromRow(row: {
  holder: string;
  count: number;
  oldest_seconds: number;
  next_expiry_seconds: number;
}): LeaseHolder {
  const { next_expiry_seconds, ...counted } = row;
  return { ...countedGroupFromRow(counted), nextExpirySeconds: next_expiry_seconds };
}
