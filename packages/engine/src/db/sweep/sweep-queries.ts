import { sql } from 'kysely';
import type { Db } from '../database';
import { leaseHoldingStatesSql, readyStateSql, receiptAwaitingStateSql } from '../task-states';

/** Leases that ran out (R10), oldest first. */
export async function taskListExpiredLeases(
  db: Db,
  limit: number,
): Promise<{ id: string; epoch: number }[]> {
  const { rows } = await sql<{ id: string; lease_epoch: string }>`
    select id, lease_epoch from causeway_tasks
    where state in (${leaseHoldingStatesSql}) and lease_expires_at <= causeway_now()
    order by lease_expires_at limit ${limit}`.execute(db);
  return rows.map((row) => ({ id: row.id, epoch: Number(row.lease_epoch) }));
}

/** Queued tasks whose absolute deadline passed before they started (R28). */
export async function taskListQueuedPastDeadline(db: Db, limit: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select id from causeway_tasks
    where state = ${readyStateSql} and deadline_at is not null and deadline_at <= causeway_now()
    order by deadline_at limit ${limit}`.execute(db);
  return rows.map((row) => row.id);
}

/** Tasks whose receipt did not arrive in time (R23). */
export async function taskListReceiptOverdue(db: Db, limit: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select id from causeway_tasks
    where state = ${receiptAwaitingStateSql} and receipt_deadline_at <= causeway_now()
    order by receipt_deadline_at limit ${limit}`.execute(db);
  return rows.map((row) => row.id);
}
