import type { TaskState } from '@causeway/workflow';
import { sql, type Transaction } from 'kysely';
import type { Db } from '../database';
import type { CausewayDatabase, TraceCarrier } from '../schema';
import { waitingStateSql } from '../task-states';

type Tx = Transaction<CausewayDatabase>;

/** An event as stored (R38). */
export interface StoredEvent {
  readonly id: string;
  readonly name: string;
  readonly key: string;
  readonly payload: unknown;
  readonly idempotencyKey: string | null;
  readonly sentBy: string;
  /** The sender's reason, or null when they gave none. */
  readonly reason: string | null;
  readonly receivedAt: Date;
}

interface EventRow {
  id: string;
  name: string;
  key: string;
  payload: unknown;
  idempotency_key: string | null;
  sent_by: string;
  reason: string | null;
  received_at: Date;
}

const eventFromRow = (row: EventRow): StoredEvent => ({
  id: row.id,
  name: row.name,
  key: row.key,
  payload: row.payload,
  idempotencyKey: row.idempotency_key,
  sentBy: row.sent_by,
  reason: row.reason,
  receivedAt: row.received_at,
});

/**
 * Serialises everything that matches events of these (name, key) pairs: a send, and a wait
 * that looks for events sent before it began. Whichever commits second sees the other's
 * rows, so an event and its waiter never miss each other. Taken in key order, so two
 * transactions that take several never wait for each other in a cycle.
 */
export async function eventKeysLock(
  tx: Tx,
  keys: readonly { readonly name: string; readonly key: string }[],
): Promise<void> {
  // Names never hold a newline (event-step.ts), so name + newline + key is unambiguous.
  const texts = [...new Set(keys.map(({ name, key }) => `${name}\n${key}`))].sort();
  await sql`select pg_advisory_xact_lock(hashtext('causeway_event'), hashtext(k))
    from (select k from unnest(${texts}::text[]) as k order by k) as ordered`.execute(tx);
}

/** The events stored under these (name, idempotency key) pairs. */
export async function eventListByIdempotencyKeys(
  tx: Tx,
  pairs: readonly { readonly name: string; readonly idempotencyKey: string }[],
): Promise<StoredEvent[]> {
  if (pairs.length === 0) return [];
  const { rows } = await sql<EventRow>`
    select e.id, e.name, e.key, e.payload, e.idempotency_key, e.sent_by, e.reason, e.received_at
    from unnest(${pairs.map((pair) => pair.name)}::text[],
      ${pairs.map((pair) => pair.idempotencyKey)}::text[]) as v(name, idempotency_key)
    join causeway_events as e on e.name = v.name and e.idempotency_key = v.idempotency_key`.execute(
    tx,
  );
  return rows.map(eventFromRow);
}

/**
 * Stores events, in order, at the statement's database time, and answers with the tasks
 * waiting for any of them now: taken after the (name, key) locks (`eventKeysLock`), this
 * statement's snapshot holds every wait that began before.
 */
export async function eventInsertWithWaiters(
  tx: Tx,
  events: readonly (Omit<StoredEvent, 'payload' | 'receivedAt'> & {
    readonly payloadJson: string;
    /** The context it was sent in (R57); absent or null: none. */
    readonly traceContext?: TraceCarrier | null;
  })[],
): Promise<{
  receivedAt: Date;
  waiting: { taskId: string; workflowId: string; name: string; key: string }[];
}> {
  const { rows } = await sql<{
    at: Date;
    id: string | null;
    workflow_id: string | null;
    event_name: string | null;
    event_key: string | null;
  }>`
    with now as materialized (select causeway_statement_now() as at),
    inserted as (
      insert into causeway_events
        (id, name, key, payload, idempotency_key, sent_by, reason, received_at, trace_context)
      select v.id, v.name, v.key, v.payload::jsonb, v.idempotency_key, v.sent_by, v.reason,
        (select at from now), v.trace_context::jsonb
      from unnest(${events.map((event) => event.id)}::uuid[], ${events.map((event) => event.name)}::text[],
          ${events.map((event) => event.key)}::text[], ${events.map((event) => event.payloadJson)}::text[],
          ${events.map((event) => event.idempotencyKey)}::text[], ${events.map((event) => event.sentBy)}::text[],
          ${events.map((event) => event.reason)}::text[],
          ${events.map((event) => (event.traceContext == null ? null : JSON.stringify(event.traceContext)))}::text[])
          with ordinality as v(id, name, key, payload, idempotency_key, sent_by, reason,
            trace_context, position)
      order by v.position
      returning 1
    ),
    waiting as (
      select t.id, t.workflow_id, t.event_name, t.event_key
      from (select distinct name, key
              from unnest(${events.map((event) => event.name)}::text[], ${events.map((event) => event.key)}::text[])
                as p(name, key)) as v
      join causeway_tasks as t
        on t.state = ${waitingStateSql} and t.event_name = v.name and t.event_key = v.key
    )
    select (select at from now) as at, w.id, w.workflow_id, w.event_name, w.event_key
    from (select count(*) from inserted) as written
    left join waiting as w on true
    order by w.id`.execute(tx);
  const first = rows[0] as { at: Date };
  return {
    receivedAt: first.at,
    waiting: rows.flatMap((row) =>
      row.id === null
        ? []
        : [
            {
              taskId: row.id,
              workflowId: row.workflow_id as string,
              name: row.event_name as string,
              key: row.event_key as string,
            },
          ],
    ),
  };
}

/** For each wait, the first event of its (name, key) received since its workflow was accepted. */
export async function eventFindFirstMatches(
  tx: Tx,
  waits: readonly {
    readonly taskId: string;
    readonly workflowId: string;
    readonly name: string;
    readonly key: string;
  }[],
): Promise<{ taskId: string; event: StoredEvent }[]> {
  if (waits.length === 0) return [];
  const { rows } = await sql<EventRow & { task_id: string }>`
    select v.task_id, e.id, e.name, e.key, e.payload, e.idempotency_key, e.sent_by, e.reason, e.received_at
    from unnest(${waits.map((wait) => wait.taskId)}::uuid[],
      ${waits.map((wait) => wait.workflowId)}::uuid[], ${waits.map((wait) => wait.name)}::text[],
      ${waits.map((wait) => wait.key)}::text[]) as v(task_id, workflow_id, name, key)
    join causeway_workflows as w on w.id = v.workflow_id
    cross join lateral (
      select id, name, key, payload, idempotency_key, sent_by, reason, received_at from causeway_events
      where name = v.name and key = v.key and received_at >= w.created_at
      order by received_at, id
      limit 1
    ) as e`.execute(tx);
  return rows.map((row) => ({ taskId: row.task_id, event: eventFromRow(row) }));
}

/** The tasks these events completed, at their send or later, as they are now. */
export async function eventDeliveredTasks(
  db: Db,
  eventIds: readonly string[],
): Promise<
  { eventId: string; taskId: string; workflowId: string; step: string; state: TaskState }[]
> {
  if (eventIds.length === 0) return [];
  const { rows } = await sql<{
    event_id: string;
    task_id: string;
    workflow_id: string;
    step: string;
    state: string;
  }>`
    select d.event_id, d.task_id, d.workflow_id, t.step, t.state
    from causeway_event_deliveries as d join causeway_tasks as t on t.id = d.task_id
    where d.event_id = any(${[...eventIds]}::uuid[]) order by d.delivered_at, d.task_id`.execute(
    db,
  );
  return rows.map((row) => ({
    eventId: row.event_id,
    taskId: row.task_id,
    workflowId: row.workflow_id,
    step: row.step,
    state: row.state as TaskState,
  }));
}

/** The events delivered to each of these tasks (normally one), oldest delivery first. */
export async function eventListByTaskIds(
  db: Db,
  taskIds: readonly string[],
): Promise<(StoredEvent & { readonly taskId: string })[]> {
  if (taskIds.length === 0) return [];
  const { rows } = await sql<EventRow & { task_id: string }>`
    select d.task_id, e.id, e.name, e.key, e.payload, e.idempotency_key, e.sent_by, e.reason, e.received_at
    from causeway_event_deliveries as d join causeway_events as e on e.id = d.event_id
    where d.task_id = any(${[...taskIds]}::uuid[])
    order by d.task_id, d.delivered_at, e.id`.execute(db);
  return rows.map((row) => ({ ...eventFromRow(row), taskId: row.task_id }));
}
