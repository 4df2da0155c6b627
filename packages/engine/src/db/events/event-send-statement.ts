import { sql } from 'kysely';
import { arrayLiteral, constantArrayLiteral } from '../array-literal';
import { type Db, preparedSql } from '../database';
import { executeDirect } from '../direct';
import { effectAssignments, setList, valueSql } from '../edge-assignments';
import type { EventEdgePlan, SettleEdgePlan } from '../edge-plans';
import { transitionsChannel, wakeupChannel } from '../notify-channels';
import { parentUpdateCte, type StepColumns, stepCte } from '../settle/shared-ctes';

type PromotionPlan = Omit<
  SettleEdgePlan,
  'completeFrom' | 'completeTo' | 'completeReason' | 'completeEffects'
>;

/**
 * A send of events in one statement: the events (distinct (name, key) pairs and idempotency
 * keys; each detail is the machine's edge detail for it), who sends them, the edges, and the
 * engine's steps.
 */
export interface EventSendPlan extends PromotionPlan, EventEdgePlan, StepColumns {
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
  /** The event steps this engine defines: workflow name, step, event name. */
  readonly eventStepWorkflows: readonly string[];
  readonly eventStepSteps: readonly string[];
  readonly eventStepEvents: readonly string[];
}

/** A task an event completed: by the event's position in the plan, as it is after. */
export interface EventCompletion {
  readonly position: number;
  readonly taskId: string;
  readonly workflowId: string;
  readonly step: string;
  readonly state: string;
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
 * parent), the deliveries and the wake-ups.
 */
export async function eventSendInOneStatement(
  db: Db,
  plan: EventSendPlan,
): Promise<{
  readonly written: boolean;
  readonly receivedAt: Date;
  readonly completed: readonly EventCompletion[];
}> {
  const clockNow = sql`clock.now`;
  const eventAssignments = effectAssignments(plan.eventEffects, { now: clockNow });
  const promoteAssignments = effectAssignments(plan.promoteEffects, {
    now: clockNow,
    undelayed: true,
  });
  const { rows } = await executeDirect(
    db,
    sql<{
      readonly written: boolean;
      readonly received_at: Date;
      readonly position: string | null;
      readonly id: string | null;
      readonly workflow_id: string | null;
      readonly step: string | null;
      readonly state: string | null;
    }>`
    ${preparedSql}
    with clock as materialized (select causeway_statement_now() as now),
    sent as materialized (
      select * from unnest(${arrayLiteral(plan.ids)}::uuid[], ${arrayLiteral(plan.names)}::text[],
        ${arrayLiteral(plan.keys)}::text[], ${arrayLiteral(plan.payloads)}::text[],
        ${arrayLiteral(plan.idempotencyKeys)}::text[], ${arrayLiteral(plan.reasons)}::text[],
        ${arrayLiteral(plan.outputs)}::text[], ${arrayLiteral(plan.details)}::text[])
        with ordinality as s(id, name, key, payload, idempotency_key, reason, output, detail,
          position)
    ),
    -- The (name, key) locks, then the waits under them, read with a snapshot taken after the
    -- locks (0018): every wait committed before them is here.
    waiter as materialized (
      select * from causeway_event_waits_locked(${arrayLiteral(plan.names)}::text[],
        ${arrayLiteral(plan.keys)}::text[])
    ),
    locked_workflow as materialized (
      select id, name, state, created_at from causeway_workflows
      -- An array, not a semi-join: the planner then probes the primary key for each id.
      where id = any(array(select workflow_id from waiter))
      order by id
      for update skip locked
    ),
    whole as materialized (
      select (select count(*) from locked_workflow) = (select count(distinct workflow_id) from waiter)
        and (select count(*) from waiter) = (select count(distinct workflow_id) from waiter)
        -- Probed per keyed event (the unique index), never a join the planner may answer
        -- with a scan of every event.
        and not exists (
          select 1 from sent as s
          where s.idempotency_key is not null and exists (
            select 1 from causeway_events as e
            where e.name = s.name and e.idempotency_key = s.idempotency_key)
        ) as ok
    ),
    -- Each locked task with its workflow's columns, so nothing below joins the two: joins of
    -- one statement's CTEs are planned from row estimates of one or ten, and a nested loop
    -- over a thousand rows on each side is a million comparisons.
    locked_task as materialized (
      select t.id, t.workflow_id, t.step, t.queue, t.state, t.attempt, t.deadline_at,
        t.event_name, t.event_key, w.name, w.state as parent_before, w.created_at
      from causeway_tasks as t
      join locked_workflow as w on w.id = t.workflow_id
      -- The array as well as the join: with the join alone the planner scans the whole table
      -- whenever it thinks the table small, instead of probing its workflow_id index.
      where t.workflow_id = any(array(select id from locked_workflow)) and (select ok from whole)
      order by t.id
      for update of t
    ),
    ${stepCte(plan)},
    event_step as materialized (
      select * from unnest(
        ${constantArrayLiteral(plan.eventStepWorkflows)}::text[],
        ${constantArrayLiteral(plan.eventStepSteps)}::text[],
        ${constantArrayLiteral(plan.eventStepEvents)}::text[]
      ) as es(name, step, event)
    ),
    -- The waits these events reach, by the position of their event, then checked in \`cause\`:
    -- joined on single keys with no filter, so that no row estimate of one turns a join into a
    -- loop over every pair.
    matched as materialized (
      select t.id as task_id, t.workflow_id, t.step, t.state as from_state, t.attempt,
        t.name, t.parent_before, t.created_at, s.name as event_name, s.id as event_id,
        s.output, s.detail, s.position as event_position
      from waiter as wt
      join locked_task as t on t.id = wt.task_id
      join sent as s on s.position = wt.pair_index
    ),
    cause as materialized (
      select m.*, row_number() over (order by m.task_id) as position
      from matched as m
      join event_step as es on es.name = m.name and es.step = m.step and es.event = m.event_name
      cross join clock
      -- A wait of a workflow accepted after the event never matches it (R37).
      where m.from_state = ${plan.eventFrom} and m.created_at <= clock.now
    ),
    -- Every task of those workflows as it is after the edge, with what its workflow's log
    -- rows need from the cause (one per workflow: \`whole\`).
    after_cause as materialized (
      select t.id, t.workflow_id, t.step, t.queue, t.attempt, t.name, c.parent_before,
        c.step as cause_step, c.position as cause_position,
        case when t.id = c.task_id then ${plan.eventTo} else t.state end as state
      from locked_task as t
      join cause as c on c.workflow_id = t.workflow_id
    ),
    promoted as materialized (
      select a.id, a.workflow_id, a.step, a.queue, a.attempt, a.cause_position, s.ord
      from after_cause as a
      join step as s on s.name = a.name and s.step = a.step
      left join lateral jsonb_array_elements_text(s.after) as u(step) on true
      left join after_cause as done
        on done.workflow_id = a.workflow_id and done.step = u.step
          and done.state = ${sql.lit(plan.upstreamState)}
      where a.state = ${sql.lit(plan.promoteFrom)}
      group by a.id, a.workflow_id, a.step, a.queue, a.attempt, a.cause_position, s.ord
      having count(u.step) = count(done.id)
    ),
    parent as materialized (
      select m.workflow_id, m.parent_before, m.cause_step, m.cause_position, g.state as parent_after
      from (
        select a.workflow_id, a.parent_before, a.cause_step, a.cause_position,
          bit_or(1 << (array_position(${constantArrayLiteral(plan.stateOrder)}::text[],
            case when a.id = any(array(select id from promoted)) then ${plan.promoteTo}
              else a.state end) - 1)) as mask
        from after_cause as a
        group by a.workflow_id, a.parent_before, a.cause_step, a.cause_position
      ) as m
      join unnest(
        ${constantArrayLiteral(plan.presenceMasks)}::integer[],
        ${constantArrayLiteral(plan.presenceStates)}::text[]
      ) as g(mask, state) on g.mask = m.mask
    ),
    event_insert as (
      insert into causeway_events
        (id, name, key, payload, idempotency_key, sent_by, reason, received_at)
      select s.id, s.name, s.key, s.payload::jsonb, s.idempotency_key, ${plan.sentBy}, s.reason,
        clock.now
      from sent as s, clock
      where (select ok from whole)
      order by s.position
      returning 1
    ),
    event_update as (
      update causeway_tasks as t set
        state = ${plan.eventTo},
        ${setList(eventAssignments, 't')},
        output = c.output::jsonb,
        updated_at = clock.now
      from cause as c, clock
      -- Conditional on the state it was read with (R1). The column, not the constant: with a
      -- constant the planner may scan every task in that state (and join them all to the
      -- events) instead of probing the primary key for each.
      where t.id = c.task_id and t.state = c.from_state
      returning t.id, t.workflow_id, t.step, t.state, c.event_position
    ),
    promoted_update as (
      update causeway_tasks as t set
        state = ${plan.promoteTo},
        ${setList(promoteAssignments, 't')},
        updated_at = clock.now
      from promoted as p, clock
      where t.id = p.id and t.state = ${sql.lit(plan.promoteFrom)}
      returning 1
    ),
    ${parentUpdateCte},
    delivery_insert as (
      insert into causeway_event_deliveries (event_id, task_id, workflow_id, delivered_at)
      select c.event_id, c.task_id, c.workflow_id, clock.now from cause as c, clock
      returning 1
    ),
    log_insert as (
      insert into causeway_transitions (workflow_id, task_id, step, from_state, to_state,
        reason, error_category, error_summary, actor, attempt, at, detail)
      select workflow_id, task_id, step, from_state, to_state, reason, null, null, actor,
        attempt, clock.now, detail
      from (
        select c.workflow_id, c.task_id, c.step, ${plan.eventFrom} as from_state,
          ${plan.eventTo} as to_state, ${plan.eventReason} as reason, ${plan.actor} as actor,
          ${valueSql(eventAssignments, 'attempt', sql`c.attempt`)} as attempt,
          c.detail::jsonb as detail, c.position, 0 as rank, 0 as ord
        from cause as c
        union all
        select p.workflow_id, p.id, p.step, ${sql.lit(plan.promoteFrom)}, ${plan.promoteTo},
          ${plan.promoteReason}, ${plan.promoteActor},
          ${valueSql(promoteAssignments, 'attempt', sql`p.attempt`)}, null, p.cause_position, 1,
          p.ord
        from promoted as p
        union all
        select pa.workflow_id, null, null, pa.parent_before, pa.parent_after, ${plan.eventReason},
          ${plan.actor}, 0, jsonb_build_object('step', pa.cause_step), pa.cause_position, 2, 0
        from parent as pa
        where pa.parent_after <> pa.parent_before
      ) as v, clock
      order by position, rank, ord
      returning 1
    ),
    wake as (
      select pg_notify(${wakeupChannel}, queue) from (select distinct queue from promoted) as q
    ),
    announce as (
      select pg_notify(${transitionsChannel}, '') where exists (select 1 from cause)
    ),
    summary as materialized (
      -- Fails the statement, undoing its writes, if it wrote other than it decided.
      select (select ok from whole) as written, (select now from clock) as received_at,
        causeway_written_as_decided(
          (select count(*) from cause) * 2 + (select count(*) from promoted)
            + (select count(*) from parent where parent_after <> parent_before)
            + case when (select ok from whole) then (select count(*) from sent) else 0 end,
          (select count(*) from event_update) + (select count(*) from delivery_insert)
            + (select count(*) from promoted_update) + (select count(*) from workflow_update)
            + (select count(*) from event_insert)) as checked,
        (select count(*) from log_insert) as log_count,
        (select count(*) from wake) as wake_count,
        (select count(*) from announce) as announce_count
    )
    select summary.written, summary.received_at, u.event_position as position, u.id,
      u.workflow_id, u.step, u.state
    from summary
    left join event_update as u on true
    order by u.event_position, u.id`,
  );
  const first = rows[0];
  if (first === undefined) throw new Error('the send statement returned no summary row');
  return {
    written: first.written,
    receivedAt: first.received_at,
    completed: rows.flatMap((row) =>
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
    ),
  };
}
