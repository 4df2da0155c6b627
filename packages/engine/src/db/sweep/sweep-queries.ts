import { sql } from 'kysely';
import { definedWorkflowStep } from '../claim/defined-workflow-step';
import type { Db } from '../database';
import {
  cancelRequestedStateSql,
  childrenAwaitingStateSql,
  leaseHoldingStatesSql,
  readyStateSql,
  receiptAwaitingStateSql,
  waitingStateSql,
} from '../task-states';

/**
 * The sweeper's lists (R10, R23, R28, R39) take only tasks of workflows whose every step the
 * sweeping engine defines (`stepKeys`, `workflow/step`, as the claim's `definedWorkflowStep`):
 * what it lists it can decide, so another version's work, however old and however much of it,
 * never fills a list and stops the sweep of its own (R54). Each list reads its partial index
 * in due order and probes the workflow's primary key per row it reads.
 */

/** Leases that ran out (R10), oldest first. */
export async function taskListExpiredLeases(
  db: Db,
  stepKeys: readonly string[],
  limit: number,
): Promise<{ id: string; epoch: number }[]> {
  const { rows } = await sql<{ id: string; lease_epoch: string }>`
    select id, lease_epoch from causeway_tasks as t
    where state in (${leaseHoldingStatesSql}) and lease_expires_at <= causeway_now()
      and ${definedWorkflowStep(sql`t`, stepKeys)}
    order by lease_expires_at limit ${limit}`.execute(db);
  return rows.map((row) => ({ id: row.id, epoch: Number(row.lease_epoch) }));
}

/**
 * Queued tasks whose absolute deadline passed before they started (R28), event steps whose
 * deadline passed while they waited (R39), and steps whose deadline passed while they awaited
 * their children (R46): each part reads its own partial index.
 */
export async function taskListQueuedPastDeadline(
  db: Db,
  stepKeys: readonly string[],
  limit: number,
): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    (select id from causeway_tasks as t
     where state = ${readyStateSql} and deadline_at is not null and deadline_at <= causeway_now()
       and ${definedWorkflowStep(sql`t`, stepKeys)}
     order by deadline_at limit ${limit})
    union all
    (select id from causeway_tasks as t
     where state = ${waitingStateSql} and deadline_at is not null and deadline_at <= causeway_now()
       and ${definedWorkflowStep(sql`t`, stepKeys)}
     order by deadline_at limit ${limit})
    union all
    (select id from causeway_tasks as t
     where state = ${childrenAwaitingStateSql} and deadline_at is not null
       and deadline_at <= causeway_now() and ${definedWorkflowStep(sql`t`, stepKeys)}
     order by deadline_at limit ${limit})`.execute(db);
  return rows.map((row) => row.id);
}

/** Event steps whose wait reached its timeout (R39), with what their output depends on. */
export async function taskListWaitsTimedOut(
  db: Db,
  stepKeys: readonly string[],
  limit: number,
): Promise<{ id: string; workflowName: string; workflowVersion: string | null; step: string }[]> {
  const { rows } = await sql<{ id: string; name: string; version: string | null; step: string }>`
    select t.id, w.name, w.version, t.step from causeway_tasks as t
    join causeway_workflows as w on w.id = t.workflow_id
    where t.state = ${waitingStateSql} and t.wait_timeout_at <= causeway_now()
      and ${definedWorkflowStep(sql`t`, stepKeys)}
    order by t.wait_timeout_at limit ${limit}`.execute(db);
  return rows.map((row) => ({
    id: row.id,
    workflowName: row.name,
    workflowVersion: row.version,
    step: row.step,
  }));
}

/** Tasks whose receipt did not arrive in time (R23). */
export async function taskListReceiptOverdue(
  db: Db,
  stepKeys: readonly string[],
  limit: number,
): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select id from causeway_tasks as t
    where state = ${receiptAwaitingStateSql} and receipt_deadline_at <= causeway_now()
      and ${definedWorkflowStep(sql`t`, stepKeys)}
    order by receipt_deadline_at limit ${limit}`.execute(db);
  return rows.map((row) => row.id);
}

/**
 * Steps awaiting children whose tally already decides them (R45): every child terminal, or
 * more failures than the tolerance. Only when the child edge that decided one was written by
 * an engine that does not define the step's workflow (R54); its own engine's sweeper settles it.
 */
export async function taskListChildrenDecided(
  db: Db,
  stepKeys: readonly string[],
  limit: number,
): Promise<{ parentTaskId: string; parentWorkflowId: string }[]> {
  // Each state through its own partial index (a list of both states would scan the table).
  const { rows } = await sql<{ id: string; workflow_id: string }>`
    (select id, workflow_id from causeway_tasks as t
     where state = ${childrenAwaitingStateSql} and children_total is not null
       and (children_succeeded + children_failed >= children_total
         or children_failed > children_allowed_failures)
       and ${definedWorkflowStep(sql`t`, stepKeys)}
     limit ${limit})
    union all
    (select id, workflow_id from causeway_tasks as t
     where state = ${cancelRequestedStateSql} and children_total is not null
       and children_succeeded + children_failed >= children_total
       and ${definedWorkflowStep(sql`t`, stepKeys)}
     limit ${limit})`.execute(db);
  return rows.map((row) => ({ parentTaskId: row.id, parentWorkflowId: row.workflow_id }));
}
