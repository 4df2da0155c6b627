import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { CausewayDatabase } from '../schema';
import { retentionDeleteAllow } from './retention-delete-allow';
import { terminalWorkflowStatesSql, workflowStillMovesSql } from './workflow-states';

export interface RemovedCounts {
  readonly workflows: number;
  readonly tasks: number;
  readonly outbox: number;
  readonly deliveries: number;
}

/**
 * The statement of one batch: up to `limit` workflows of one partition's id range that are
 * terminal, finished before the cutoff and can no longer move (workflow-states.ts), with their
 * tasks, outbox messages, the messages' delivery attempts, their tasks' event deliveries and
 * refused late results (R56) and their attributes' rows (R55).
 * The workflows are locked first (id order, SKIP LOCKED): an edge locks its workflow before
 * its tasks (workflow-lock.ts), so a replay that revives one either holds it (skipped here) or
 * waits and then finds it gone; the state and finish are re-checked on the locked row. The
 * events stay for event-delete-batch.ts; the log rows stay until the partition is dropped.
 */
export function workflowDeleteBatchSql(
  range: { readonly lowerId: string | null; readonly upperId: string },
  cutoff: Date,
  limit: number,
): RawBuilder<{ workflows: string; tasks: string; outbox: string; deliveries: string }> {
  return sql<{ workflows: string; tasks: string; outbox: string; deliveries: string }>`
    with doomed as materialized (
      select w.id, w.created_at, w.attributes from causeway_workflows as w
       where (${range.lowerId}::uuid is null or w.id >= ${range.lowerId}::uuid)
         and w.id < ${range.upperId}::uuid
         and w.state in (${terminalWorkflowStatesSql}) and w.updated_at < ${cutoff}
         and not ${workflowStillMovesSql()}
       order by w.id
       limit ${limit}
       for update of w skip locked
    ), doomed_tasks as materialized (
      select t.id from causeway_tasks as t
       where t.workflow_id = any(array(select id from doomed))
    ), doomed_outbox as materialized (
      select o.id from causeway_outbox as o
       where o.task_id = any(array(select id from doomed_tasks))
    ), outbox_deliveries as (
      delete from causeway_outbox_deliveries
       where outbox_id = any(array(select id from doomed_outbox)) returning 1
    ), outbox as (
      delete from causeway_outbox where id = any(array(select id from doomed_outbox)) returning 1
    ), event_deliveries as (
      delete from causeway_event_deliveries
       where task_id = any(array(select id from doomed_tasks)) returning 1
    ), stale_results as (
      delete from causeway_stale_results
       where workflow_id = any(array(select id from doomed)) returning 1
    ), tasks as (
      delete from causeway_tasks where id = any(array(select id from doomed_tasks)) returning 1
    ), attribute_rows as (
      -- Its attributes' rows (R55), by their primary key: the terms made again from its jsonb.
      delete from causeway_workflow_attributes as a
       using doomed as d, jsonb_each(d.attributes) as e
       where d.attributes is not null
         and a.term = causeway_attribute_term(e.key, e.value)
         and a.created_at = d.created_at and a.workflow_id = d.id
       returning 1
    ), workflows as (
      delete from causeway_workflows where id = any(array(select id from doomed)) returning 1
    )
    select (select count(*) from workflows) as workflows, (select count(*) from tasks) as tasks,
           (select count(*) from outbox) as outbox,
           (select count(*) from event_deliveries) as deliveries`;
}

/** Runs one batch in its own transaction (which lets the append-only trigger through). */
export async function workflowDeleteBatch(
  db: Kysely<CausewayDatabase>,
  range: { readonly lowerId: string | null; readonly upperId: string },
  cutoff: Date,
  limit: number,
): Promise<RemovedCounts> {
  return db.transaction().execute(async (tx) => {
    await retentionDeleteAllow(tx);
    const { rows } = await workflowDeleteBatchSql(range, cutoff, limit).execute(tx);
    const row = rows[0] as { workflows: string; tasks: string; outbox: string; deliveries: string };
    return {
      workflows: Number(row.workflows),
      tasks: Number(row.tasks),
      outbox: Number(row.outbox),
      deliveries: Number(row.deliveries),
    };
  });
}
