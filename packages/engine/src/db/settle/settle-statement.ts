import { type Selectable, sql } from 'kysely';
import { arrayLiteral, constantArrayLiteral } from '../array-literal';
import type { LeasedTaskWithInputs } from '../claim/claim-statement';
import { type Db, preparedSql } from '../database';
import { executeDirect } from '../direct';
import {
  caseSetList,
  effectAssignments,
  setList,
  thenAssignments,
  valueSql,
} from '../edge-assignments';
import { taskColumns } from '../locked-runs';
import { transitionsChannel, wakeupChannel } from '../notify-channels';
import { leasedTaskFromRow, taskFromRow } from '../rows';
import type { TaskTable } from '../schema';
import { traceParentFromRow } from '../tracing/trace-contexts';
import {
  afterAwaitingSteps,
  awaitingStepCtes,
  childCauseCtes,
  childEndCtes,
  childRoomCtes,
  tallyUpdateCte,
} from './child-tally-ctes';
import type { ChainedRow, SettledResultRow, SettleStatementPlan } from './settle-plan';
import { parentUpdateCte, stepCte } from './shared-ctes';

/**
 * Writes `complete` results in one statement, for the common case: it locks every workflow of
 * the batch in id order and all their tasks (as every decider does, waiting for them), then,
 * for each result whose task still holds the lease (R7) and has a complete edge from its state
 * (each is the batch's only request for its workflow: `SettleStatementPlan.taskIds`): the
 * task's edge, the promotion of each
 * pending step whose upstream steps have now all succeeded, the parent's new state and the log
 * rows in the order the full decision writes them (task, promotions in definition order,
 * parent), plus the wake-ups. Results that end child workflows count them into the tally of
 * the step awaiting them (R45) with a conditional update of its row, when they cannot settle
 * the step: successes while another child stays open. Those parts are left out (`children`
 * false) when no result is known to be of an awaited child: the common batch does not pay for
 * them. Results it does not decide are left
 * untouched for the full decision (in the same transaction, or after this statement commits
 * on its own).
 */
export async function taskSettleInOneStatement(
  db: Db,
  plan: SettleStatementPlan,
  {
    withTasks,
    children,
  }: {
    readonly withTasks: boolean;
    /** Whether a result may end a child workflow its parent step awaits (R45). */
    readonly children: boolean;
  },
): Promise<{
  readonly completed: readonly SettledResultRow[];
  /** Steps made ready and leased to the plan's holder in the same statement (`chain`). */
  readonly chained: readonly LeasedTaskWithInputs[];
  readonly now: Date;
}> {
  const { chain } = plan;
  // The SET clauses come from the edge table's rows (see edge-assignments.ts).
  const clockNow = sql`clock.now`;
  const completeAssignments = effectAssignments(plan.completeEffects, { now: clockNow });
  const promoteAssignments = effectAssignments(plan.promoteEffects, {
    now: clockNow,
    undelayed: true,
  });
  // A chained step takes both edges in one write: the promotion's, then the claim's.
  const chainedAssignments = thenAssignments(
    promoteAssignments,
    effectAssignments(chain.effects, {
      now: clockNow,
      holder: sql`${plan.holder}`,
      leaseMs: sql`${chain.leaseMs}::integer`,
    }),
  );
  const { rows } = await executeDirect(
    db,
    sql<
      Selectable<TaskTable> & {
        readonly position: string | null;
        readonly edge_from: string;
        readonly edge_to: string;
        readonly edge_reason: string;
        /** On the first row only. */
        readonly summary_now: Date | null;
        readonly chained: readonly ChainedRow[] | null;
      }
    >`
    ${preparedSql}
    with clock as materialized (select causeway_statement_now() as now),
    request as materialized (
      select * from unnest(${arrayLiteral(plan.taskIds)}::uuid[],
        ${arrayLiteral(plan.workflowIds)}::uuid[], ${arrayLiteral(plan.epochs)}::bigint[],
        ${arrayLiteral(plan.outputs)}::text[])
        with ordinality as r(task_id, workflow_id, epoch, output, position)
    ),
    ${children ? sql`${awaitingStepCtes},` : sql``}
    locked_workflow as materialized (
      select id, name, version, state, parent_task_id, detached, replaced from causeway_workflows
      -- An array, not a semi-join: the planner then probes the primary key for each id
      -- instead of hashing the whole table whenever it is small enough to look cheap.
      where id = any(${arrayLiteral(plan.batchWorkflowIds)}::uuid[])
        ${children ? afterAwaitingSteps : sql``}
      order by id
      for update
    ),
    locked_task as materialized (
      select id, workflow_id, step, queue, state, attempt, lease_holder, lease_epoch,
        lease_expires_at, deadline_at, output, concurrency_key, rate_name
      from causeway_tasks
      -- An array, not a semi-join, as for the workflows: with a semi-join the planner scans
      -- the whole table whenever it thinks the table small.
      where workflow_id = any(array(select id from locked_workflow))
      order by id
      for update
    ),
    ${stepCte(plan)},
    ${children ? sql`${childRoomCtes},` : sql``}
    -- Results whose task still holds the lease and has a complete edge from its state.
    candidate as materialized (
      select r.task_id, r.workflow_id, r.output, r.position, r.epoch, t.step,
        t.state as from_state, t.attempt, e.to_state, e.reason, w.name,
        w.version, w.state as parent_before, w.parent_task_id, w.detached
      from request as r
      -- Plain joins, not correlated subqueries: those run once per pair of rows the join
      -- considers.
      join locked_task as t on t.id = r.task_id and t.workflow_id = r.workflow_id
      join locked_workflow as w on w.id = r.workflow_id
      join step as s on s.name = w.name and s.step = t.step
        and s.version = coalesce(w.version, s.latest)
      join unnest(
        ${constantArrayLiteral(plan.completeFrom)}::text[],
        ${constantArrayLiteral(plan.completeTo)}::text[],
        ${constantArrayLiteral(plan.completeReason)}::text[]
      ) as e(from_state, to_state, reason) on e.from_state = t.state
      where t.lease_holder = ${plan.holder} and t.lease_epoch = r.epoch
        and t.lease_expires_at > (select now from clock)
    ),
    ${
      children
        ? childCauseCtes
        : // Without those parts, a result of an awaited child is left to the full decision.
          sql`cause as materialized (
            select * from candidate where parent_task_id is null or detached
          ),`
    }
    after_cause as materialized (
      select t.id, t.workflow_id, t.step, t.queue, t.attempt, t.deadline_at, t.concurrency_key,
        t.rate_name, c.name, c.version,
        case when t.id = c.task_id then c.to_state else t.state end as state
      from locked_task as t
      join cause as c on c.workflow_id = t.workflow_id
    ),
    -- A pending step is promoted when each of its upstream steps has succeeded: counted with
    -- joins (linear in the batch) rather than a correlated subquery per pending step.
    promoted as materialized (
      select a.id, a.workflow_id, a.step, a.queue, a.attempt, a.deadline_at, a.concurrency_key,
        a.rate_name, s.ord, s.upstream
      from after_cause as a
      join step as s on s.name = a.name and s.step = a.step
        and s.version = coalesce(a.version, s.latest)
      left join lateral jsonb_array_elements_text(s.after) as u(step) on true
      left join after_cause as done
        on done.workflow_id = a.workflow_id and done.step = u.step
          and done.state = ${sql.lit(plan.upstreamState)}
      where a.state = ${sql.lit(plan.promoteFrom)}
      group by a.id, a.workflow_id, a.step, a.queue, a.attempt, a.deadline_at, a.concurrency_key,
        a.rate_name, s.ord, s.upstream
      having count(u.step) = count(done.id)
    ),
    parent as materialized (
      select c.workflow_id, c.parent_before, g.state as parent_after
      from cause as c
      join (
        select a.workflow_id,
          bit_or(1 << (array_position(${constantArrayLiteral(plan.stateOrder)}::text[],
            case when p.id is null then a.state else ${plan.promoteTo} end) - 1)) as mask
        from after_cause as a
        left join promoted as p on p.id = a.id
        group by a.workflow_id
      ) as m on m.workflow_id = c.workflow_id
      join unnest(
        ${constantArrayLiteral(plan.presenceMasks)}::integer[],
        ${constantArrayLiteral(plan.presenceStates)}::text[]
      ) as g(mask, state) on g.mask = m.mask
    ),
    ${children ? sql`${childEndCtes},` : sql``}
    -- Promoted steps this worker leases at once, per queue up to its limit, in result order:
    -- only where the claim leaves the parent as the promotion left it (so no parent edge is
    -- due for the claim) and the deadline has not passed (that claim ends the task instead).
    chained as materialized (
      select r.id, r.position, r.ord
      from (
        select p.id, p.queue, c.position, p.ord,
          row_number() over (partition by p.queue order by c.position, p.ord) as nth
        from promoted as p
        join cause as c on c.workflow_id = p.workflow_id
        join parent as pa on pa.workflow_id = p.workflow_id
        join unnest(
          ${constantArrayLiteral(chain.parentFrom)}::text[],
          ${constantArrayLiteral(chain.parentTo)}::text[]
        ) as m(from_state, to_state)
          on m.from_state = pa.parent_after and m.to_state = pa.parent_after
        -- A keyed step (R50) is claimed only by a claim that counts its key's slots, and one
        -- that spends a rate limit (R51) only by a claim that spends it.
        where (p.deadline_at is null or p.deadline_at > (select now from clock))
          and p.concurrency_key is null and p.rate_name is null
      ) as r
      join unnest(${chain.queues}::text[], ${chain.limits}::integer[]) as q(queue, most)
        on q.queue = r.queue
      -- Nothing from a paused queue (R53): its promoted steps stay queued.
      where r.nth <= q.most
        and not exists (select 1 from causeway_queue_pauses as qp where qp.queue = r.queue)
    ),
    promoted_plan as materialized (
      select p.*, ch.id is not null as chained, ch.position
      from promoted as p
      left join chained as ch on ch.id = p.id
    ),
    -- Two updates, each joined to one CTE: rows a concurrent transaction changed since the
    -- statement began are then followed to their latest version (EvalPlanQual) reliably.
    completed_update as (
      update causeway_tasks as t set
        state = c.to_state,
        ${setList(completeAssignments, 't')},
        output = coalesce(c.output::jsonb, t.output),
        updated_at = clock.now
      from cause as c, clock
      -- Conditional on the state and lease it was read with (R1).
      where t.id = c.task_id and t.state = c.from_state and t.lease_epoch = c.epoch
      returning ${taskColumns}, c.position
    ),
    -- A chained step takes both edges in one write: pending → queued → leased.
    promoted_update as (
      update causeway_tasks as t set
        state = case when p.chained then ${sql.lit(chain.to)} else ${sql.lit(plan.promoteTo)} end,
        ${caseSetList(sql`p.chained`, chainedAssignments, promoteAssignments, 't')},
        updated_at = clock.now
      from promoted_plan as p, clock
      where t.id = p.id and t.state = ${sql.lit(plan.promoteFrom)}
      returning t.id, t.workflow_id, t.step, t.queue, t.state, t.attempt, t.lease_epoch,
        t.deadline_at, t.evidence, t.checkpoints, t.replay_count, p.chained, p.position, p.ord,
        p.upstream
    ),
    ${parentUpdateCte},
    ${children ? sql`${tallyUpdateCte},` : sql``}
    log_insert as (
      insert into causeway_transitions (workflow_id, task_id, step, from_state, to_state,
        reason, error_category, error_summary, actor, attempt, at, detail)
      select workflow_id, task_id, step, from_state, to_state, reason, null, null, actor,
        attempt, clock.now, detail
      from (
        select c.workflow_id, c.task_id, c.step, c.from_state, c.to_state, c.reason,
          ${plan.actor} as actor, c.attempt, null::jsonb as detail, c.position, 0 as rank,
          0 as ord
        from cause as c
        union all
        select p.workflow_id, p.id, p.step, ${sql.lit(plan.promoteFrom)}, ${plan.promoteTo},
          ${plan.promoteReason}, ${plan.promoteActor},
          ${valueSql(promoteAssignments, 'attempt', sql`p.attempt`)}, null, c.position, 1, p.ord
        from promoted as p
        join cause as c on c.workflow_id = p.workflow_id
        union all
        select c.workflow_id, null, null, pa.parent_before, pa.parent_after, c.reason,
          ${plan.actor}, 0, jsonb_build_object('step', c.step), c.position, 2, 0
        from parent as pa
        join cause as c on c.workflow_id = pa.workflow_id
        where pa.parent_after <> pa.parent_before
        union all
        -- The claims of chained steps come after every result's rows, as the full decision
        -- writes them when the claims follow the results.
        select p.workflow_id, p.id, p.step, ${plan.promoteTo}, ${chain.to}, ${chain.reason},
          ${plan.actor}, ${valueSql(chainedAssignments, 'attempt', sql`p.attempt`)}, null, p.position, 3,
          p.ord
        from promoted_plan as p
        where p.chained
      ) as v, clock
      order by rank = 3, position, rank, ord
      returning 1
    ),
    wake as (
      select pg_notify(${wakeupChannel}, queue)
      from (
        select queue from promoted_plan where not chained
        -- A result frees its task's concurrency slot (R50): a task of its key may be next.
        union
        select t.queue from cause as c join locked_task as t on t.id = c.task_id
        where t.concurrency_key is not null
      ) as q
    ),
    -- What the attempts of chained steps need: the leased task, its workflow's name and
    -- input, and its upstream steps' outputs (this statement's own result included; the
    -- others from the locked rows, which are current even if the statement waited).
    chained_out as materialized (
      select jsonb_agg(jsonb_build_object(
        'id', pu.id, 'workflow_id', pu.workflow_id, 'step', pu.step, 'queue', pu.queue,
        'state', pu.state, 'attempt', pu.attempt, 'lease_epoch', pu.lease_epoch,
        'deadline_at', pu.deadline_at, 'evidence', pu.evidence, 'checkpoints', pu.checkpoints,
        'w_name', c.name, 'w_version', c.version, 'w_input', w.input,
        'w_trace_context', w.trace_context, 'replay_count', pu.replay_count,
        'w_awaited_child', c.parent_task_id is not null and not c.detached,
        'outputs', coalesce((
          select jsonb_object_agg(u.step, case when u.step = c.step
            then coalesce(c.output::jsonb, lt.output) else lt.output end)
          from jsonb_array_elements_text(pu.upstream) as u(step)
          join locked_task as lt on lt.workflow_id = pu.workflow_id and lt.step = u.step
        ), '{}'::jsonb)
      ) order by pu.position, pu.ord) as tasks
      from promoted_update as pu
      join cause as c on c.workflow_id = pu.workflow_id
      join causeway_workflows as w on w.id = pu.workflow_id
      where pu.chained
    ),
    announce as (
      select pg_notify(${transitionsChannel}, '') where exists (select 1 from cause)
    ),
    summary as materialized (
      -- Fails the statement, undoing its writes, if it wrote other than it decided.
      select *, causeway_written_as_decided(decided_count, written_count) as checked
      from (select (select now from clock) as summary_now,
        (select count(*) from log_insert) as log_count,
        (select count(*) from workflow_update) as workflow_count,
        (select count(*) from wake) as wake_count,
        (select count(*) from announce) as announce_count,
        (select tasks from chained_out) as chained,
        (select count(*) from cause) + (select count(*) from promoted)
          + (select count(*) from parent where parent_after <> parent_before)
          ${children ? sql`+ (select count(*) from child_change)` : sql``} as decided_count,
        (select count(*) from completed_update) + (select count(*) from promoted_update)
          + (select count(*) from workflow_update)
          ${children ? sql`+ (select coalesce(sum(succeeded), 0)::bigint from tally_update)` : sql``}
          as written_count) as counts
    )
    -- Whole task rows only for callers that read them: pg parses every column it is sent.
    select ${withTasks ? sql`tu.*` : sql`tu.attempt, tu.position`},
      c.from_state as edge_from, c.to_state as edge_to, c.reason as edge_reason,
      -- The summary once, on the first row (pg parses every column of every row).
      case when first.is_first then summary.summary_now end as summary_now,
      case when first.is_first then summary.chained end as chained
    from summary
    left join completed_update as tu on true
    left join cause as c on c.task_id = tu.id
    cross join lateral (select tu.position is null
      or tu.position = (select min(position) from completed_update) as is_first) as first
    order by tu.position`,
  );
  const summary = rows[0];
  if (summary?.summary_now == null) throw new Error('the settle statement returned no summary row');
  const now = summary.summary_now;
  const completed = rows
    .filter((row) => row.position !== null)
    .map((row) => ({
      position: Number(row.position),
      from: row.edge_from,
      to: row.edge_to,
      reason: row.edge_reason,
      attempt: row.attempt,
      task: withTasks ? taskFromRow(row) : null,
    }));
  const chained = (summary.chained ?? []).map((row) => ({
    task: leasedTaskFromRow({
      ...row,
      lease_epoch: String(row.lease_epoch),
      deadline_at: row.deadline_at === null ? null : new Date(row.deadline_at),
    }),
    workflowName: row.w_name,
    workflowVersion: row.w_version,
    input: row.w_input,
    outputs: row.outputs,
    awaitedChild: row.w_awaited_child,
    traceParent: traceParentFromRow(row.w_trace_context, row.replay_count),
  }));
  return { completed, chained, now };
}
