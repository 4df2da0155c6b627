import { type RawBuilder, sql, type Transaction } from 'kysely';
import { arrayLiteral } from '../array-literal';
import { preparedSql } from '../database';
import { outboxWakeup, transitionsChannel, wakeupChannel } from '../notify-channels';
import type { CausewayDatabase } from '../schema';
import type { NewTransitionRow } from '../transition-row';

/** The full new value of a task row after an edge, written only if the row is still as read. */
export interface TaskWrite {
  readonly id: string;
  readonly expectedState: string;
  readonly expectedEpoch: number;
  readonly state: string;
  readonly attempt: number;
  readonly replayCount: number;
  readonly effectStarted: boolean;
  readonly runAt: Date | null;
  readonly deadlineAt: Date | null;
  readonly leaseHolder: string | null;
  readonly leaseEpoch: number;
  readonly leaseExpiresAt: Date | null;
  readonly outputJson: string | null;
  readonly receiptId: string | null;
  readonly receiptDeadlineAt: Date | null;
  readonly lastErrorCategory: string | null;
  readonly lastError: string | null;
  readonly eventName: string | null;
  readonly eventKey: string | null;
  readonly waitSince: Date | null;
  readonly waitTimeoutAt: Date | null;
}

/** A send request for the outbox (R22), written with its task's edge. */
export interface NewOutboxRow {
  readonly id: string;
  readonly taskId: string;
  readonly workflowId: string;
  readonly channel: string;
  readonly payloadJson: string;
}

/** Which event completed which task (R38), written with the edge. */
export interface NewDeliveryRow {
  readonly eventId: string;
  readonly taskId: string;
  readonly workflowId: string;
}

/** What one decision writes: task rows, parent states, log rows, outbox rows and wake-ups. */
export interface RunChanges {
  readonly outbox?: readonly NewOutboxRow[];
  readonly deliveries?: readonly NewDeliveryRow[];
  readonly tasks: readonly TaskWrite[];
  readonly workflows: readonly { id: string; expectedState: string; state: string }[];
  readonly transitions: readonly NewTransitionRow[];
  readonly wakeQueues: readonly string[];
}

/**
 * The insert of log rows (R24) in their order, as one fragment of a larger statement; `at`
 * is the database time to stamp, `filter` an optional condition on the row (`v.`).
 */
function logRowsInsert(
  log: readonly NewTransitionRow[],
  at: RawBuilder<unknown>,
  filter: RawBuilder<unknown>,
) {
  const column = (pick: (row: NewTransitionRow) => string | number | null) =>
    arrayLiteral(log.map(pick));
  return sql`insert into causeway_transitions (workflow_id, task_id, step, from_state, to_state,
      reason, error_category, error_summary, actor, attempt, at, detail)
    select workflow_id, task_id, step, from_state, to_state, reason, error_category,
      error_summary, actor, attempt, ${at}, detail::jsonb
    from unnest(
      ${column((row) => row.workflowId)}::uuid[],
      ${column((row) => row.taskId)}::uuid[],
      ${column((row) => row.step)}::text[],
      ${column((row) => row.from)}::text[],
      ${column((row) => row.to)}::text[],
      ${column((row) => row.reason)}::text[],
      ${column((row) => row.errorCategory)}::text[],
      ${column((row) => row.errorSummary)}::text[],
      ${column((row) => row.actor)}::text[],
      ${column((row) => row.attempt)}::integer[],
      ${column((row) => (row.detail === null ? null : JSON.stringify(row.detail)))}::text[]
    ) with ordinality as v(workflow_id, task_id, step, from_state, to_state, reason,
      error_category, error_summary, actor, attempt, detail, position)
    ${filter}
    order by position`;
}

/**
 * Writes one decision in a single statement (data-modifying CTEs): every task conditional
 * on the state and lease epoch it was read with (R1), the parents, the log rows in order
 * (R24), outbox rows, event deliveries and the wake-ups. Returns how many task and workflow rows matched.
 */
export async function runChangesWrite(
  tx: Transaction<CausewayDatabase>,
  changes: RunChanges,
  now: Date,
): Promise<{ tasks: number; workflows: number }> {
  const tasks = changes.tasks;
  const column = <T>(pick: (write: TaskWrite) => T) => tasks.map(pick);
  const log = changes.transitions;
  const outbox = changes.outbox ?? [];
  const deliveries = changes.deliveries ?? [];
  const { rows } = await sql<{ tasks: string; workflows: string }>`
    ${preparedSql}
    with task_update as (
      update causeway_tasks as t set
        state = v.state,
        attempt = v.attempt,
        replay_count = v.replay_count,
        effect_started = v.effect_started,
        run_at = v.run_at,
        deadline_at = v.deadline_at,
        lease_holder = v.lease_holder,
        lease_epoch = v.lease_epoch,
        lease_expires_at = v.lease_expires_at,
        output = coalesce(v.output::jsonb, t.output),
        receipt_id = v.receipt_id,
        receipt_deadline_at = v.receipt_deadline_at,
        last_error_category = v.last_error_category,
        last_error = v.last_error,
        event_name = v.event_name,
        event_key = v.event_key,
        wait_since = v.wait_since,
        wait_timeout_at = v.wait_timeout_at,
        updated_at = ${now}
      from unnest(
        ${column((w) => w.id)}::uuid[],
        ${column((w) => w.expectedState)}::text[],
        ${column((w) => w.expectedEpoch)}::bigint[],
        ${column((w) => w.state)}::text[],
        ${column((w) => w.attempt)}::integer[],
        ${column((w) => w.replayCount)}::integer[],
        ${column((w) => w.effectStarted)}::boolean[],
        ${column((w) => w.runAt)}::timestamptz[],
        ${column((w) => w.deadlineAt)}::timestamptz[],
        ${column((w) => w.leaseHolder)}::text[],
        ${column((w) => w.leaseEpoch)}::bigint[],
        ${column((w) => w.leaseExpiresAt)}::timestamptz[],
        ${column((w) => w.outputJson)}::text[],
        ${column((w) => w.receiptId)}::text[],
        ${column((w) => w.receiptDeadlineAt)}::timestamptz[],
        ${column((w) => w.lastErrorCategory)}::text[],
        ${column((w) => w.lastError)}::text[],
        ${column((w) => w.eventName)}::text[],
        ${column((w) => w.eventKey)}::text[],
        ${column((w) => w.waitSince)}::timestamptz[],
        ${column((w) => w.waitTimeoutAt)}::timestamptz[]
      ) as v(id, expected_state, expected_epoch, state, attempt, replay_count, effect_started,
             run_at, deadline_at, lease_holder, lease_epoch, lease_expires_at, output,
             receipt_id, receipt_deadline_at, last_error_category, last_error, event_name,
             event_key, wait_since, wait_timeout_at)
      where t.id = v.id and t.state = v.expected_state and t.lease_epoch = v.expected_epoch
      returning 1
    ),
    workflow_update as (
      update causeway_workflows as w set state = v.state, updated_at = ${now}
      from unnest(
        ${changes.workflows.map((change) => change.id)}::uuid[],
        ${changes.workflows.map((change) => change.expectedState)}::text[],
        ${changes.workflows.map((change) => change.state)}::text[]
      ) as v(id, expected_state, state)
      where w.id = v.id and w.state = v.expected_state
      returning 1
    ),
    log_insert as (
      ${logRowsInsert(log, sql`${now}`, sql``)}
      returning 1
    ),
    outbox_insert as (
      insert into causeway_outbox (id, task_id, workflow_id, channel, payload, state,
        next_attempt_at, created_at)
      select id, task_id, workflow_id, channel, payload::jsonb, 'pending', ${now}, ${now}
      from unnest(
        ${outbox.map((row) => row.id)}::uuid[],
        ${outbox.map((row) => row.taskId)}::uuid[],
        ${outbox.map((row) => row.workflowId)}::uuid[],
        ${outbox.map((row) => row.channel)}::text[],
        ${outbox.map((row) => row.payloadJson)}::text[]
      ) as v(id, task_id, workflow_id, channel, payload)
      returning 1
    ),
    delivery_insert as (
      insert into causeway_event_deliveries (event_id, task_id, workflow_id, delivered_at)
      select event_id, task_id, workflow_id, ${now}
      from unnest(
        ${deliveries.map((row) => row.eventId)}::uuid[],
        ${deliveries.map((row) => row.taskId)}::uuid[],
        ${deliveries.map((row) => row.workflowId)}::uuid[]
      ) as v(event_id, task_id, workflow_id)
      returning 1
    ),
    wake as (
      select pg_notify(${wakeupChannel}, queue)
      from unnest(${[...new Set([...changes.wakeQueues, ...(outbox.length > 0 ? [outboxWakeup] : [])])]}::text[]) as queue
    ),
    announce as (
      select pg_notify(${transitionsChannel}, '') where ${log.length > 0}::boolean
    )
    select (select count(*) from task_update) as tasks,
           (select count(*) from workflow_update) as workflows,
           (select count(*) from log_insert) as log,
           (select count(*) from outbox_insert) as outbox,
           (select count(*) from delivery_insert) as deliveries,
           (select count(*) from wake) as wake,
           (select count(*) from announce) as announce`.execute(tx);
  const counts = rows[0] as { tasks: string; workflows: string };
  return { tasks: Number(counts.tasks), workflows: Number(counts.workflows) };
}
