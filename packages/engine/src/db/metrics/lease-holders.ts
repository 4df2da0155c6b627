import { sql } from 'kysely';
import { leaseHoldingStatesSql } from '../task-states';

export interface LeaseHolder {
  /** host/pid/boot id of the engine holding the leases (R7). */
  readonly holder: string;
  readonly tasks: number;
  /** Seconds since the oldest of its leases was taken (or its task asked to cancel). */
  readonly oldestSeconds: number;
  /**
   * Seconds until its first lease runs out; below zero once one has run out and the sweeper
   * has not yet decided it. A holder that stopped renewing counts down to it.
   */
  readonly nextExpirySeconds: number;
}

/** Lease-holding tasks by holder, through the partial index the sweeper reads expiries from. */
export const leaseHoldersSql = sql`
  select lease_holder as holder, count(*)::int as tasks,
         extract(epoch from causeway_now() - min(updated_at))::float8 as oldest_seconds,
         extract(epoch from min(lease_expires_at) - causeway_now())::float8 as next_expiry_seconds
    from causeway_tasks
   where state in (${leaseHoldingStatesSql}) and lease_holder is not null
   group by lease_holder`;

export function leaseHolderFromRow(row: {
  holder: string;
  tasks: number;
  oldest_seconds: number;
  next_expiry_seconds: number;
}): LeaseHolder {
  return {
    holder: row.holder,
    tasks: row.tasks,
    oldestSeconds: Math.max(0, row.oldest_seconds),
    nextExpirySeconds: row.next_expiry_seconds,
  };
}
