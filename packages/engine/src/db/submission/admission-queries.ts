import { sql, type Transaction } from 'kysely';
import { readyHalves } from '../claim/claim-order';
import type { Db } from '../database';
import { type WorkflowRecord, workflowFromRow } from '../rows';
import type { CausewayDatabase } from '../schema';
import { readyStateSql } from '../task-states';

/** Existing workflows by (name, idempotency key), for deduplicated submits (R2). */
export async function workflowFindByKey(
  db: Db,
  name: string,
  idempotencyKey: string,
): Promise<WorkflowRecord | undefined> {
  const row = await db
    .selectFrom('causeway_workflows')
    .selectAll()
    .where('name', '=', name)
    .where('idempotency_key', '=', idempotencyKey)
    .executeTakeFirst();
  return row === undefined ? undefined : workflowFromRow(row);
}

/** Ready backlog of a queue, for admission control. */
export async function queueBacklog(db: Db, queue: string): Promise<number> {
  const { rows } = await sql<{ count: string }>`
    select ${sql.join(
      readyHalves.map(
        (half) => sql`(select count(*) from causeway_tasks
      where state = ${readyStateSql} and ${half} and queue = ${queue})`,
      ),
      sql` + `,
    )} as count`.execute(db);
  return Number(rows[0]?.count ?? 0);
}

/** Serializes admission to one capped queue for the rest of the transaction. */
export async function queueLockAdmission(
  tx: Transaction<CausewayDatabase>,
  queue: string,
): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('causeway_admission'), hashtext(${queue}))`.execute(
    tx,
  );
}
