import { sql } from 'kysely';
import { arrayLiteral, constantArraySql } from '../array-literal';
import { type Db, preparedSql } from '../database';
import { executeText, sessionPoolOf } from '../direct';
import { effectAssignments, valueSql } from '../edge-assignments';
import { transitionsChannel } from '../notify-channels';
import { isUndefinedFunction } from '../pg-errors';
import { callSessionFunction } from '../session-functions';
import { parentUpdateCte } from '../settle/shared-ctes';
import { eventSendFunction } from './event-send-function';
import { promotionParts } from './event-send-promotions';
import {
  builtOncePerShape,
  definesEveryStepSql,
  type EventSendShape,
  eventStepKeys,
  parentStateByMask,
} from './event-send-shape';

export type { EventSendShape } from './event-send-shape';

/**
 * The events of one send: distinct (name, key) pairs and idempotency keys; each detail is the
 * machine's edge detail for it.
 */
export interface EventSendValues {
  readonly ids: readonly string[];
  readonly names: readonly string[];
  readonly keys: readonly string[];
  readonly payloads: readonly string[];
  readonly idempotencyKeys: readonly (string | null)[];
  readonly reasons: readonly (string | null)[];
  /** The output each event gives every step waiting for it (the caller checked they agree). */
  readonly outputs: readonly string[];
  readonly details: readonly string[];
  /** The event rows' `sent_by`, and the actor of the edges the events cause. */
  readonly sentBy: string;
  readonly actor: string;
}

/** A task an event completed: by the event's position in the send, as it is after. */
export interface EventCompletion {
  readonly position: number;
  readonly taskId: string;
  readonly workflowId: string;
  readonly step: string;
  readonly state: string;
}

interface SendRow {
  readonly written: boolean;
  readonly received_at: Date;
  readonly position: string | null;
  readonly id: string | null;
  readonly workflow_id: string | null;
  readonly step: string | null;
  readonly state: string | null;
}

/**
 * Which of the statement's texts a send uses: for one event or a batch, and with the
 * promotion part or without it, when no step waiting for the send's events has a step after
 * it (`promotionParts`).
 */
export interface EventSendVariant {
  readonly single: boolean;
  readonly promotes: boolean;
}

/**
 * Stores events and completes the tasks waiting for them in one statement (R38), for the
 * common case, or writes nothing and says so (`written: false`) for the transaction path to
 * decide: when a waiting task's workflow is locked by another transaction (never awaited, so
 * this statement, which holds key locks, cannot join a lock cycle with a decider that holds a
 * workflow and wants a key), when a wait began after this statement's snapshot (its rows are
 * not visible here), when a workflow waits more than once for these events, or when an
 * idempotency key was used before. What it writes is what the full decision writes, row for
 * row: the event, each waiting task's edge, the promotions it allows, the parent's new state,
 * the log rows in the full decision's order (by task id: task, promotions in definition order,
 * parent), the deliveries and the wake-ups. `promotes` may be false only when no step waiting
 * for these events has a step after it: that text makes no step ready.
 */
export async function eventSendInOneStatement(
  db: Db,
  shape: EventSendShape,
  values: EventSendValues,
  options: { readonly promotes: boolean },
): Promise<{
  readonly written: boolean;
  readonly receivedAt: Date;
  readonly completed: readonly EventCompletion[];
}> {
  const single = values.ids.length === 1;
  const events = [
    values.ids,
    values.names,
    values.keys,
    values.payloads,
    values.idempotencyKeys,
    values.reasons,
    values.outputs,
    values.details,
  ].map((column) => (single ? column[0] : arrayLiteral(column)));
  const parameters = [...events, values.sentBy, values.actor];
  const rows = await sendRows(db, shape, { single, promotes: options.promotes }, parameters);
  const first = rows[0];
  if (first === undefined) throw new Error('the send statement returned no summary row');
  const completed = rows.flatMap((row) =>
    row.id === null
      ? []
      : [
          {
            position: Number(row.position),
            taskId: row.id,
            workflowId: row.workflow_id as string,
            step: row.step as string,
            state: row.state as string,
          },
        ],
  );
  completed.sort((a, b) =>
    a.position === b.position ? (a.taskId < b.taskId ? -1 : 1) : a.position - b.position,
  );
  return { written: first.written, receivedAt: first.received_at, completed };
}

/**
 * One event, on a connection that keeps its session, goes to the send function, which writes
 * the same; any other send, or one whose server connection lacks the function (a transaction
 * pooler the engine was not told of: the call failed and wrote nothing), to the statement.
 */
async function sendRows(
  db: Db,
  shape: EventSendShape,
  variant: EventSendVariant,
  parameters: readonly unknown[],
): Promise<SendRow[]> {
  const sessionPool = variant.single ? sessionPoolOf(db) : undefined;
  if (sessionPool !== undefined) {
    const fn = eventSendFunction(db, shape, variant.promotes);
    try {
      return await callSessionFunction<SendRow>(sessionPool, fn, parameters);
    } catch (error) {
      if (!isUndefinedFunction(error)) throw error;
    }
  }
  const text = eventSendStatementText(db, shape, variant);
  return (await executeText<SendRow>(db, text, parameters)).rows;
}

const texts = new WeakMap<EventSendShape, Map<string, string>>();

/**
 * The statement's text for an engine's shape and a variant, compiled once (the plans of every
 * variant are tested at scale).
 */
export function eventSendStatementText(
  db: Db,
  shape: EventSendShape,
  variant: EventSendVariant,
): string {
  return builtOncePerShape(texts, shape, `${variant.single}/${variant.promotes}`, () => {
    const compiled = statement(shape, variant).compile(db);
    if (compiled.parameters.length > 0) {
      throw new Error('the send statement must hold its constants in its text');
    }
    return compiled.sql;
  });
}

/**
 * The events' parameters $1–$8 as arrays: a batch binds array literals; one event binds its
 * values, made one-element arrays in the statement, which costs less than parsing array
 * literals at every execution.
 */
function eventParameters(single: boolean) {
  const parameter = (index: number, type: 'uuid' | 'text') =>
    sql.raw(single ? `array[$${index}::${type}]` : `$${index}::${type}[]`);
  return {
    ids: parameter(1, 'uuid'),
    names: parameter(2, 'text'),
    keys: parameter(3, 'text'),
    payloads: parameter(4, 'text'),
    idempotencyKeys: parameter(5, 'text'),
    reasons: parameter(6, 'text'),
    outputs: parameter(7, 'text'),
    details: parameter(8, 'text'),
  };
}

/**
 * The statement, with the edges and steps written into its text as constants and the events as
 * parameters $1–$10 (ids, names, keys, payloads, idempotency keys, reasons, outputs, details,
 * sent by, actor). Constants in the text are parsed once per connection (it is a named prepared
 * statement), and lookups in them (`->`, subscripts) replace joins with tables of constants.
 */
function statement(shape: EventSendShape, variant: EventSendVariant) {
  const clockNow = sql`clock.now`;
  const eventAssignments = effectAssignments(shape.eventEffects, { now: clockNow });
  const promotion = promotionParts(shape, variant.promotes, eventAssignments);
  const p = eventParameters(variant.single);
  const lit = (value: string) => sql.lit(value);
  const eventSteps = eventStepKeys(shape);
  const parentByMask = parentStateByMask(shape);
  return sql<SendRow>`
    ${preparedSql}
    with clock as materialized (select causeway_statement_now() as now),
    -- The (name, key) locks, then the waits under them, read with a snapshot taken after the
    -- locks (0018): every wait committed before them is here.
    waiter as materialized (
      select * from causeway_event_waits_locked(${p.names}, ${p.keys})
    ),
    -- Never waits, so the order it locks in cannot make a cycle.
    locked_workflow as materialized (
      select id, name, state,
        -- A child workflow's edges may settle its parent step (R45): the full decision's.
        (parent_task_id is not null and not detached) as awaited_child,
        -- A wait of a workflow accepted after the event never matches it (R37), nor one of a
        -- workflow with a step this engine does not define (R54: its own engine's sweeper
        -- completes it, and makes ready the steps this one does not know).
        created_at <= (select now from clock)
          and ${definesEveryStepSql(shape)}
          as decidable
      from causeway_workflows as w
      -- An array, not a semi-join: the planner then probes the primary key for each id.
      where id = any(array(select workflow_id from waiter))
      for update skip locked
    ),
    whole as materialized (
      -- Every wait's workflow locked, and none twice: a workflow is locked once, so the two
      -- counts are equal only if the waits are in distinct workflows and all of those locked.
      select (select count(*) from locked_workflow) = (select count(*) from waiter)
        and not exists (select 1 from locked_workflow where awaited_child)
        -- Probed per keyed event (the unique index), never a join the planner may answer
        -- with a scan of every event.
        and not exists (
          select 1 from unnest(${p.names}, ${p.idempotencyKeys}) as s(name, idempotency_key)
          where s.idempotency_key is not null and exists (
            select 1 from causeway_events as e
            where e.name = s.name and e.idempotency_key = s.idempotency_key)
        ) as ok
    ),
    -- The locked workflows by id, for lookups: no CTE of this statement is joined to another
    -- (or to a table by more than one condition). Such joins are planned from row estimates of
    -- one or ten, and a nested loop over a thousand rows on each side is a million comparisons;
    -- a lookup in a map is linear whatever plan is chosen (event-send-plan.test.ts).
    workflow_of as materialized (
      select coalesce(jsonb_object_agg(id::text, jsonb_build_object('name', name,
        'state', state, 'decidable', decidable)), '{}') as by_id
      from locked_workflow
    ),
    -- Each locked task with its workflow's columns.
    locked_task as materialized (
      select t.id, t.workflow_id, t.step, t.queue, t.state, t.attempt, w.row ->> 'name' as name,
        w.row ->> 'state' as parent_before, (w.row -> 'decidable')::boolean as decidable
      -- Looked up, not joined: a row lock of a join copies each row of its other side (here
      -- the whole map) into every locked row.
      from causeway_tasks as t,
        lateral (select (select by_id from workflow_of) -> t.workflow_id::text as row) as w
      -- The array alone, probed in the workflow_id index: with a join to the workflows as well
      -- the planner may probe the index once per workflow with the whole array each time.
      where t.workflow_id = any(array(select id from locked_workflow)) and (select ok from whole)
      order by t.id
      for update of t
    ),
    -- Each wait's event by its task, for lookups.
    wait_of as materialized (
      select coalesce(jsonb_object_agg(task_id::text, pair_index), '{}') as by_task from waiter
    ),
    -- The waits these events reach that this engine's steps may take the event's edge from,
    -- with their event's values by subscript.
    cause as materialized (
      select t.id as task_id, t.workflow_id, t.step, t.state as from_state, t.attempt,
        t.parent_before, w.pair_index as event_position,
        (${p.ids})[w.pair_index] as event_id, (${p.outputs})[w.pair_index] as output,
        (${p.details})[w.pair_index] as detail
      from locked_task as t, wait_of as m,
        lateral (select (m.by_task ->> t.id::text)::integer as pair_index) as w
      where w.pair_index is not null and t.state = ${lit(shape.eventFrom)}
        and (t.name || E'\n' || t.step || E'\n' || (${p.names})[w.pair_index])
          = any(${constantArraySql(eventSteps, 'text')})
        and t.decidable
    ),
    -- Each cause by its workflow (one per workflow: \`whole\`), for lookups.
    cause_of as materialized (
      select coalesce(jsonb_object_agg(workflow_id::text,
        jsonb_build_object('task', task_id, 'step', step)), '{}') as by_workflow
      from cause
    ),
    -- Every task of those workflows as it is after the edge, with what its workflow's log
    -- rows need from the cause.
    after_cause as materialized (
      select t.id, t.workflow_id, t.step, t.queue, t.attempt, t.name, t.parent_before,
        c.cause ->> 'step' as cause_step, (c.cause ->> 'task')::uuid as cause_task,
        case when t.id = (c.cause ->> 'task')::uuid then ${lit(shape.eventTo)} else t.state end
          as state
      from locked_task as t, cause_of as m,
        lateral (select m.by_workflow -> t.workflow_id::text as cause) as c
      where c.cause is not null
    ),
    ${promotion.ctes}
    parent as materialized (
      select m.workflow_id, m.parent_before, m.cause_step, m.cause_task,
        (${constantArraySql(parentByMask, 'text')})[m.mask] as parent_after
      from (
        select a.workflow_id, a.parent_before, a.cause_step, a.cause_task,
          bit_or(1 << (array_position(${constantArraySql(shape.stateOrder, 'text')},
            ${promotion.stateForParent}) - 1)) as mask
        from after_cause as a
        group by a.workflow_id, a.parent_before, a.cause_step, a.cause_task
      ) as m
    ),
    event_insert as (
      insert into causeway_events
        (id, name, key, payload, idempotency_key, sent_by, reason, received_at)
      select s.id, s.name, s.key, s.payload::jsonb, s.idempotency_key, $9::text, s.reason,
        (select now from clock)
      from unnest(${p.ids}, ${p.names}, ${p.keys}, ${p.payloads}, ${p.idempotencyKeys},
        ${p.reasons}) as s(id, name, key, payload, idempotency_key, reason)
      where (select ok from whole)
    ),
    -- The event's edge for each cause and the promotion for each promoted step, in one write.
    task_update as (
      update causeway_tasks as t set
        state = u.to_state,
        ${promotion.setList},
        updated_at = clock.now
      from (
        select c.task_id as id, c.from_state, ${lit(shape.eventTo)} as to_state, true as by_event,
          c.output, c.event_position
        from cause as c${promotion.updateBranch}
      ) as u, clock
      -- Conditional on the state it was read with (R1). A column, not a constant: with a
      -- constant the planner may scan every task in that state instead of probing the
      -- primary key for each.
      where t.id = u.id and t.state = u.from_state
      returning t.id, t.workflow_id, t.step, t.state, u.by_event, u.event_position
    ),
    ${parentUpdateCte},
    delivery_insert as (
      insert into causeway_event_deliveries (event_id, task_id, workflow_id, delivered_at)
      select c.event_id, c.task_id, c.workflow_id, (select now from clock) from cause as c
    ),
    -- Written whether or not anything reads it; ordered by the cause's task id, then task,
    -- promotions in definition order, parent.
    log_insert as (
      insert into causeway_transitions (workflow_id, task_id, step, from_state, to_state,
        reason, error_category, error_summary, actor, attempt, at, detail)
      select workflow_id, task_id, step, from_state, to_state, reason, null, null, actor,
        attempt, (select now from clock), detail
      from (
        select c.workflow_id, c.task_id, c.step, ${lit(shape.eventFrom)} as from_state,
          ${lit(shape.eventTo)} as to_state, ${lit(shape.eventReason)} as reason,
          $10::text as actor,
          ${valueSql(eventAssignments, 'attempt', sql`c.attempt`)} as attempt,
          c.detail::jsonb as detail, c.task_id as cause_task, 0 as rank, 0 as ord
        from cause as c${promotion.logBranch}
        union all
        select pa.workflow_id, null, null, pa.parent_before, pa.parent_after,
          ${lit(shape.eventReason)}, $10::text, 0, jsonb_build_object('step', pa.cause_step),
          pa.cause_task, 2, 0
        from parent as pa
        where pa.parent_after <> pa.parent_before
      ) as v
      order by cause_task, rank, ord
    ),
    summary as materialized (
      select (select ok from whole) as written, (select now from clock) as received_at,
        -- Fails the statement, undoing its writes, if a conditional update wrote other than it
        -- decided (the inserts write what they select).
        causeway_written_as_decided(
          (select count(*) from (
            select from cause${promotion.decidedBranch}
            union all select from parent where parent_after <> parent_before) as decided),
          (select count(*) from (
            select from task_update union all select from workflow_update) as written)
        ) as checked,
        ${promotion.wokenColumn},
        case when exists (select from cause) then pg_notify(${lit(transitionsChannel)}, '') end
          as announced
    )
    select summary.written, summary.received_at, u.event_position as position, u.id,
      u.workflow_id, u.step, u.state
    from summary
    left join task_update as u on u.by_event`;
}
