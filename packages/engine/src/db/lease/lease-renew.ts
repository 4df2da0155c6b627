import { sql } from 'kysely';
import { type Db, preparedSql } from '../database';
import { claimedStateSql } from '../task-states';

/**
 * Renews leases (R9): only where this holder still holds the same claim, the task is still
 * `leased`, and the lease has not run out. Returns the ids that were renewed.
 */
export async function leaseRenewMany(
  db: Db,
  holder: string,
  leases: readonly { taskId: string; epoch: number }[],
  leaseMs: number,
): Promise<Set<string>> {
  if (leases.length === 0) return new Set();
  // Rows are locked in id order, like every multi-row task write, so renewals and
  // decisions cannot deadlock each other.
  const { rows } = await sql<{ id: string }>`
    ${preparedSql}
    with renewable as (
      select t.id from causeway_tasks as t
      join unnest(
        ${leases.map((lease) => lease.taskId)}::uuid[],
        ${leases.map((lease) => lease.epoch)}::bigint[]
      ) as v(id, epoch) on t.id = v.id and t.lease_epoch = v.epoch
      where t.lease_holder = ${holder} and t.state = ${claimedStateSql}
        and t.lease_expires_at > causeway_now()
      order by t.id
      for update of t
    )
    update causeway_tasks as t
    set lease_expires_at = causeway_now() + ${leaseMs} * interval '1 millisecond'
    from renewable
    where t.id = renewable.id
    returning t.id`.execute(db);
  return new Set(rows.map((row) => row.id));
}
