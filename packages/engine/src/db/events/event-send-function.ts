import { createHash } from 'node:crypto';
import { type RawBuilder, sql } from 'kysely';
import { constantArraySql, typedConstantSql } from '../array-literal';
import type { Db } from '../database';
import { effectAssignments, setList, valueSql } from '../edge-assignments';
import { transitionsChannel, wakeupChannel } from '../notify-channels';
import { preparedMarker } from '../prepared-statements';
import type { SessionFunction } from '../session-functions';
import {
  builtOncePerShape,
  definesEveryStepSql,
  type EventSendShape,
  eventStepKeys,
  parentStateByMask,
  stepLookups,
} from './event-send-shape';

/**
 * One event's send (R38) as a PL/pgSQL function each connection creates for itself in
 * `pg_temp`, generated from the edge table and the engine's steps as the one statement is: it
 * writes what the statement writes, row for row, and leaves to the transaction path what the
 * statement leaves. A send is then a dozen small statements whose plans the connection keeps,
 * each run only when needed (no promotion query when nothing waits, no parent write when the
 * parent stays), where the statement starts a plan of some ninety nodes at every execution.
 * Its call takes parameters $1–$10 as the statement's, one event's values as they are, and
 * answers the statement's columns (`SendRow`).
 */
const functions = new WeakMap<EventSendShape, Map<string, SessionFunction>>();

/**
 * The function for an engine's shape, with the promotion part or without it (when no step
 * waiting for the event has a step after it, as the statement's variants), built once.
 */
export function eventSendFunction(
  db: Db,
  shape: EventSendShape,
  promotes: boolean,
): SessionFunction {
  return builtOncePerShape(functions, shape, String(promotes), () =>
    compiledSendFunction(db, shape, promotes),
  );
}

function compiledSendFunction(db: Db, shape: EventSendShape, promotes: boolean): SessionFunction {
  const body = functionBody(shape, promotes).compile(db);
  if (body.parameters.length > 0) {
    throw new Error('the send function must hold its constants in its text');
  }
  // Named by its text: a connection that made another engine's function keeps it apart.
  const name = `causeway_event_send_${createHash('sha1').update(body.sql).digest('hex').slice(0, 16)}`;
  return {
    name,
    createText: `create or replace function pg_temp.${name}(
  p_event_id uuid, p_name text, p_key text, p_payload text, p_idempotency_key text,
  p_reason text, p_output text, p_detail text, p_sent_by text, p_actor text)
returns table (o_written boolean, o_received_at timestamptz, o_position integer, o_id uuid,
  o_workflow_id uuid, o_step text, o_state text)
language plpgsql volatile
-- Plans made once per connection. A custom plan would otherwise be made at every call for each
-- statement with an array variable: its generic plan expects several elements, so costs more.
set plan_cache_mode = force_generic_plan
as $causeway_send$
${body.sql}
$causeway_send$`,
    callText: `${preparedMarker} select o_written as written, o_received_at as received_at,
  o_position as position, o_id as id, o_workflow_id as workflow_id, o_step as step,
  o_state as state
from pg_temp.${name}($1::uuid, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text,
  $8::text, $9::text, $10::text)`,
  };
}

/**
 * The promotions after one cause (`v_cause`): the steps of its workflow whose `after` steps
 * are all in the upstream state now, in definition order; each written, logged and its queue
 * woken as the statement's promotion part does. Only a step after the completed one can
 * become ready, so a shape without such steps has no promotion part.
 */
function promotionPart(shape: EventSendShape): RawBuilder<unknown> {
  const lit = (value: string) => sql.lit(value);
  const promoteAssignments = effectAssignments(shape.promoteEffects, {
    now: sql`v_now`,
    undelayed: true,
  });
  const { stepAfter, stepOrder } = stepLookups(shape);
  const jsonConstant = (value: unknown) => typedConstantSql(JSON.stringify(value), 'jsonb');
  const stepKey = sql`(v_cause.name || E'\n' || t.step)`;
  return sql`
    for v_promoted in
      select t.id, t.step, t.queue, t.attempt from causeway_tasks as t
      where t.workflow_id = v_cause.workflow_id and t.state = v_promote_from
        -- A step this engine does not define has no entry, so it is never promoted.
        and (${jsonConstant(stepAfter)} -> ${stepKey}) <@ (
          select coalesce(jsonb_agg(u.step), '[]') from causeway_tasks as u
          where u.workflow_id = v_cause.workflow_id and u.state = v_upstream)
      order by (${jsonConstant(stepOrder)} ->> ${stepKey})::integer
    loop
      update causeway_tasks as t set state = ${lit(shape.promoteTo)},
        ${setList(promoteAssignments, 't')}, updated_at = v_now
      where t.id = v_promoted.id and t.state = v_promote_from;
      get diagnostics v_count = row_count;
      v_decided := v_decided + 1;
      v_written := v_written + v_count;
      insert into causeway_transitions (workflow_id, task_id, step, from_state, to_state,
        reason, error_category, error_summary, actor, attempt, at, detail)
      values (v_cause.workflow_id, v_promoted.id, v_promoted.step, ${lit(shape.promoteFrom)},
        ${lit(shape.promoteTo)}, ${lit(shape.promoteReason)}, null, null,
        ${lit(shape.promoteActor)},
        ${valueSql(promoteAssignments, 'attempt', sql`v_promoted.attempt`)}, v_now, null);
      v_queues := v_queues || v_promoted.queue;
    end loop;`;
}

function functionBody(shape: EventSendShape, promotes: boolean): RawBuilder<unknown> {
  const lit = (value: string) => sql.lit(value);
  const eventAssignments = effectAssignments(shape.eventEffects, { now: sql`v_now` });
  const eventSteps = eventStepKeys(shape);
  const parentByMask = parentStateByMask(shape);
  return sql`
#variable_conflict use_column
declare
  v_now timestamptz := causeway_statement_now();
  v_tasks uuid[];
  v_workflows uuid[];
  v_locked bigint;
  v_decided bigint := 0;
  v_written bigint := 0;
  v_count bigint;
  v_cause record;
  v_promoted record;
  v_parent_after text;
  v_queues text[] := '{}';
  v_completed boolean := false;
  -- States compared as variables, never constants: a generic plan with a constant state may
  -- scan a partial index of every task in it rather than probe the key (the plan is made once,
  -- perhaps while the tables are small).
  v_event_from text := ${lit(shape.eventFrom)};
  v_promote_from text := ${lit(shape.promoteFrom)};
  v_upstream text := ${lit(shape.upstreamState)};
begin
  -- The (name, key) lock, then the waits under it, read after it (0018): every wait committed
  -- before the lock is here.
  select coalesce(array_agg(w.task_id order by w.task_id), '{}'),
      coalesce(array_agg(w.workflow_id order by w.task_id), '{}')
    into v_tasks, v_workflows
  from causeway_event_waits_locked(array[p_name], array[p_key]) as w;
  -- Never waits, so the order it locks in cannot make a cycle. A workflow is locked once, so
  -- the count equals the waits' only if they are in distinct workflows, all of them locked.
  select count(*) into v_locked from (
    select from causeway_workflows as w where w.id = any(v_workflows) for update skip locked
  ) as l;
  -- A child workflow's edges may settle its parent step (R45): left to the full decision.
  if v_locked <> cardinality(v_tasks) or exists (
      select from causeway_workflows as w
      where w.id = any(v_workflows) and w.parent_task_id is not null and not w.detached)
    or (p_idempotency_key is not null and exists (
      select from causeway_events as e
      where e.name = p_name and e.idempotency_key = p_idempotency_key)) then
    return query select false, v_now, null::integer, null::uuid, null::uuid, null::text,
      null::text;
    return;
  end if;
  insert into causeway_events (id, name, key, payload, idempotency_key, sent_by, reason,
    received_at)
  values (p_event_id, p_name, p_key, p_payload::jsonb, p_idempotency_key, p_sent_by, p_reason,
    v_now);
  -- Every task of those workflows, as the statement locks them.
  perform from causeway_tasks as t where t.workflow_id = any(v_workflows) order by t.id
    for update;
  -- The waits this engine's steps may take the event's edge from, by task id (the log's order).
  for v_cause in
    select t.id, t.workflow_id, t.step, t.attempt, w.name, w.state as parent_before
    from causeway_tasks as t, causeway_workflows as w
    where t.id = any(v_tasks) and w.id = t.workflow_id and t.state = v_event_from
      -- A wait of a workflow accepted after the event never matches it (R37), nor one of a
      -- workflow with a step this engine does not define (R54: its own engine's sweeper
      -- completes it).
      and w.created_at <= v_now
      and ${definesEveryStepSql(shape)}
      and (w.name || E'\n' || t.step || E'\n' || p_name) = any(${constantArraySql(eventSteps, 'text')})
    order by t.id
  loop
    v_completed := true;
    -- Conditional on the state it was read with (R1).
    update causeway_tasks as t set state = ${lit(shape.eventTo)},
      ${setList(eventAssignments, 't')}, output = p_output::jsonb, updated_at = v_now
    where t.id = v_cause.id and t.state = v_event_from;
    get diagnostics v_count = row_count;
    v_decided := v_decided + 1;
    v_written := v_written + v_count;
    insert into causeway_event_deliveries (event_id, task_id, workflow_id, delivered_at)
    values (p_event_id, v_cause.id, v_cause.workflow_id, v_now);
    insert into causeway_transitions (workflow_id, task_id, step, from_state, to_state, reason,
      error_category, error_summary, actor, attempt, at, detail)
    values (v_cause.workflow_id, v_cause.id, v_cause.step, ${lit(shape.eventFrom)},
      ${lit(shape.eventTo)}, ${lit(shape.eventReason)}, null, null, p_actor,
      ${valueSql(eventAssignments, 'attempt', sql`v_cause.attempt`)}, v_now, p_detail::jsonb);
    ${promotes ? promotionPart(shape) : sql``}
    -- The parent's state by presence mask (bit i: some task is in stateOrder[i]).
    select (${constantArraySql(parentByMask, 'text')})[bit_or(1 << (array_position(
        ${constantArraySql(shape.stateOrder, 'text')}, t.state) - 1))]
      into v_parent_after
    from causeway_tasks as t where t.workflow_id = v_cause.workflow_id;
    if v_parent_after <> v_cause.parent_before then
      update causeway_workflows as w set state = v_parent_after, updated_at = v_now
      where w.id = v_cause.workflow_id and w.state = v_cause.parent_before;
      get diagnostics v_count = row_count;
      v_decided := v_decided + 1;
      v_written := v_written + v_count;
      insert into causeway_transitions (workflow_id, task_id, step, from_state, to_state,
        reason, error_category, error_summary, actor, attempt, at, detail)
      values (v_cause.workflow_id, null, null, v_cause.parent_before, v_parent_after,
        ${lit(shape.eventReason)}, null, null, p_actor, 0, v_now,
        jsonb_build_object('step', v_cause.step));
    end if;
    return query select true, v_now, 1, v_cause.id, v_cause.workflow_id, v_cause.step,
      ${lit(shape.eventTo)}::text;
  end loop;
  -- Fails the call, undoing its writes, if a conditional update wrote other than it decided.
  perform causeway_written_as_decided(v_decided, v_written);
  if v_completed then
    perform pg_notify(${lit(transitionsChannel)}, '');
  else
    return query select true, v_now, null::integer, null::uuid, null::uuid, null::text,
      null::text;
  end if;
  ${promotes ? sql`perform pg_notify(${lit(wakeupChannel)}, q) from (select distinct unnest(v_queues) as q) as d;` : sql``}
end`;
}
