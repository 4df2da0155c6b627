import { sql } from 'kysely';
import type { Db } from '../database';
import {
  leaseHoldingStatesSql,
  readyStateSql,
  receiptAwaitingStateSql,
  waitingStateSql,
} from '../task-states';

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

/**
 * Queued tasks whose absolute deadline passed before they started (R28), and event steps
 * whose deadline passed while they waited (R39): each half reads its own partial index.
 */
export async function taskListQueuedPastDeadline(db: Db, limit: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    (select id from causeway_tasks
     where state = ${readyStateSql} and deadline_at is not null and deadline_at <= causeway_now()
     order by deadline_at limit ${limit})
    union all
    (select id from causeway_tasks
     where state = ${waitingStateSql} and deadline_at is not null and deadline_at <= causeway_now()
     order by deadline_at limit ${limit})`.execute(db);
  return rows.map((row) => row.id);
}

/** Event steps whose wait reached its timeout (R39), with what their output depends on. */
export async function taskListWaitsTimedOut(
  db: Db,
  limit: number,
): Promise<{ id: string; workflowName: string; step: string }[]> {
  const { rows } = await sql<{ id: string; name: string; step: string }>`
    select t.id, w.name, t.step from causeway_tasks as t
    join causeway_workflows as w on w.id = t.workflow_id
    where t.state = ${waitingStateSql} and t.wait_timeout_at <= causeway_now()
    order by t.wait_timeout_at limit ${limit}`.execute(db);
  return rows.map((row) => ({ id: row.id, workflowName: row.name, step: row.step }));
}

/** Tasks whose receipt did not arrive in time (R23). */
export async function taskListReceiptOverdue(db: Db, limit: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select id from causeway_tasks
    where state = ${receiptAwaitingStateSql} and receipt_deadline_at <= causeway_now()
    order by receipt_deadline_at limit ${limit}`.execute(db);
  return rows.map((row) => row.id);
}
