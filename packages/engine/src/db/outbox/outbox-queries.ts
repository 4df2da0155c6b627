import { sql, type Transaction } from 'kysely';
import { type Db, preparedSql } from '../database';
import type { CausewayDatabase } from '../schema';

/** An outbox row a dispatcher took for delivery. */
export interface OutboxDue {
  readonly id: string;
  readonly taskId: string;
  readonly workflowId: string;
  readonly channel: string;
  readonly payload: unknown;
  /** This delivery attempt's number (1 for the first). */
  readonly attempt: number;
}

/**
 * Takes due outbox rows for delivery (SKIP LOCKED, so many dispatchers never take the same
 * row) and pushes their due time out by `visibilityMs`: if this dispatcher dies mid-send,
 * the row becomes due again and is sent with the same idempotency key.
 */
export async function outboxTakeDue(
  db: Db,
  limit: number,
  visibilityMs: number,
): Promise<OutboxDue[]> {
  const { rows } = await sql<{
    id: string;
    task_id: string;
    workflow_id: string;
    channel: string;
    payload: unknown;
    attempts: number;
  }>`
    ${preparedSql}
    update causeway_outbox as o
    set attempts = o.attempts + 1,
        next_attempt_at = causeway_now() + ${visibilityMs} * interval '1 millisecond'
    where o.id in (
      select id from causeway_outbox
      where state = 'pending' and next_attempt_at <= causeway_now()
      order by next_attempt_at
      limit ${limit}
      for update skip locked
    )
    returning o.id, o.task_id, o.workflow_id, o.channel, o.payload, o.attempts`.execute(db);
  return rows.map((row) => ({
    id: row.id,
    taskId: row.task_id,
    workflowId: row.workflow_id,
    channel: row.channel,
    payload: row.payload,
    attempt: row.attempts,
  }));
}

/** One delivery attempt's record (R22: every attempt is kept) and the row's next state. */
export interface OutboxDeliveryRecord {
  readonly outboxId: string;
  readonly attempt: number;
  readonly outcome: 'delivered' | 'retry' | 'failed';
  readonly statusCode: number | null;
  readonly errorCategory: string | null;
  readonly error: string | null;
  readonly holder: string;
  /** For `retry`: when to try again, from database now. */
  readonly retryInMs: number | null;
}

/**
 * Records a delivery attempt and moves the outbox row on, only while this attempt still
 * owns the row (same attempt number, still pending). Returns false if another dispatcher
 * took it meanwhile (its visibility timeout ran out): then nothing is written.
 */
export async function outboxRecordDelivery(
  tx: Transaction<CausewayDatabase>,
  record: OutboxDeliveryRecord,
): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    with moved as (
      update causeway_outbox set
        state = case ${record.outcome} when 'retry' then 'pending' else ${record.outcome} end,
        delivered_at = case when ${record.outcome} = 'delivered' then causeway_now() end,
        next_attempt_at = case when ${record.outcome} = 'retry'
          then causeway_now() + ${record.retryInMs ?? 0} * interval '1 millisecond'
          else next_attempt_at end,
        last_error_category = ${record.errorCategory},
        last_error = ${record.error}
      where id = ${record.outboxId} and attempts = ${record.attempt} and state = 'pending'
      returning id
    ),
    attempt_insert as (
      insert into causeway_outbox_deliveries (outbox_id, attempt, at, outcome, status_code,
        error_category, error, holder)
      select id, ${record.attempt}, causeway_now(), ${record.outcome}, ${record.statusCode},
        ${record.errorCategory}, ${record.error}, ${record.holder}
      from moved
      returning 1
    )
    select id from moved where (select count(*) from attempt_insert) >= 0`.execute(tx);
  return rows.length === 1;
}

/** The outbox rows of some tasks with their delivery counts ("submitted, sending"). */
export async function outboxListByTasks(
  db: Db,
  taskIds: readonly string[],
): Promise<
  {
    taskId: string;
    id: string;
    channel: string;
    state: string;
    attempts: number;
    lastError: string | null;
  }[]
> {
  if (taskIds.length === 0) return [];
  const { rows: found } = await sql<{
    task_id: string;
    id: string;
    channel: string;
    state: string;
    attempts: number;
    last_error: string | null;
  }>`
    select task_id, id, channel, state, attempts, last_error from causeway_outbox
    where task_id = any(${[...taskIds]}::uuid[]) order by created_at`.execute(db);
  return found.map((row) => ({
    taskId: row.task_id,
    id: row.id,
    channel: row.channel,
    state: row.state,
    attempts: row.attempts,
    lastError: row.last_error,
  }));
}
