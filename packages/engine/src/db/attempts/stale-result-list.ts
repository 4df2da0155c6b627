import type { StaleResult } from '@causeway/workflow/internal';
import { sql } from 'kysely';
import type { Db } from '../database';

/** A stored stale result (R56) with its workflow, for grouping. */
export interface StaleResultRecord extends StaleResult {
  readonly workflowId: string;
}

/**
 * The refused results of these workflows' tasks (R56), by the workflow index, oldest refusal
 * first. The ids must be UUIDs.
 */
export async function staleResultListByWorkflows(
  db: Db,
  workflowIds: readonly string[],
): Promise<StaleResultRecord[]> {
  if (workflowIds.length === 0) return [];
  const { rows } = await sql<{
    task_id: string;
    workflow_id: string;
    lease_epoch: string;
    holder: string;
    refused_at: Date;
  }>`
    select task_id, workflow_id, lease_epoch, holder, refused_at
    from causeway_stale_results
    where workflow_id = any(${[...workflowIds]}::uuid[])
    order by refused_at, task_id, lease_epoch`.execute(db);
  return rows.map((row) => ({
    taskId: row.task_id,
    workflowId: row.workflow_id,
    epoch: Number(row.lease_epoch),
    holder: row.holder,
    refusedAt: row.refused_at,
  }));
}
