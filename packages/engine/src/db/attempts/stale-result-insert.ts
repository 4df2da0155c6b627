import { sql, type Transaction } from 'kysely';
import type { LeaseFence } from '../lease/lease-fence';
import type { CausewayDatabase } from '../schema';

/** A worker's result the decision refused because its claim's lease was lost (R7, R56). */
export interface StaleResultRow {
  readonly fence: LeaseFence;
  readonly workflowId: string;
}

/**
 * Records refused results in the transaction that refused them, at its database time `now`.
 * A repeat of one (a retried batch) is the same row, kept once.
 */
export async function staleResultInsert(
  tx: Transaction<CausewayDatabase>,
  rows: readonly StaleResultRow[],
  now: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    insert into causeway_stale_results (task_id, workflow_id, lease_epoch, holder, refused_at)
    select task_id, workflow_id, lease_epoch, holder, ${now}::timestamptz
    from unnest(
      ${rows.map((row) => row.fence.taskId)}::uuid[],
      ${rows.map((row) => row.workflowId)}::uuid[],
      ${rows.map((row) => row.fence.epoch)}::bigint[],
      ${rows.map((row) => row.fence.holder)}::text[]
    ) as v(task_id, workflow_id, lease_epoch, holder)
    on conflict (task_id, lease_epoch, holder) do nothing`.execute(tx);
}
