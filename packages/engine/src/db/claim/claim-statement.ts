import { type RawBuilder, sql } from 'kysely';
import { constantArrayLiteral } from '../array-literal';
import { type Db, preparedSql } from '../database';
import { executeDirect } from '../direct';
import { effectAssignments, setList } from '../edge-assignments';
import type { ClaimEdgePlan } from '../edge-plans';
import { type LeasedTaskRow, leasedTaskColumns } from '../locked-runs';
import { transitionsChannel } from '../notify-channels';
import { queueNotPausedSql } from '../queues/queue-pauses';
import { type LeasedTask, leasedTaskFromRow } from '../rows';
import type { TraceCarrier } from '../schema';
import { type TaskTraceParent, traceParentFromRow } from '../tracing/trace-contexts';
import { claimAtSql, dueSql } from './claim-order';
import { keyedCandidatesSql, keyGrantCtes, plainCandidateKeyColumns } from './concurrency-claim';
import { definedWorkflowStep } from './defined-workflow-step';
import {
  type RateLimitPlan,
  rateCandidateColumns,
  rateFitCtes,
  rateOpenSql,
  rateSpendCte,
} from './rate-claim';

/**
 * What a one-statement claim may do, read off the pure machine and the edge table
 * (`deriveClaimOutcomes`) and the engine's definitions: the edge and its row's effects (the
 * statement's SET clause is generated from them), the parent's state after a claim by its
 * state before, and the steps this engine defines (with whether each needs its upstream
 * steps' outputs).
 */
export interface ClaimStatementPlan extends ClaimEdgePlan {
  readonly queue: string;
  readonly limit: number;
  readonly holder: string;
  readonly actor: string;
  readonly leaseMs: number;
  readonly definedNames: readonly string[];
  readonly stepNames: readonly string[];
  /** Per step: its definition's version, and the latest version of its name (R54). */
  readonly stepVersions: readonly string[];
  readonly stepLatest: readonly string[];
  readonly stepSteps: readonly string[];
  /** `workflow@version` of every version this engine defines (`definedWorkflowStep`). */
  readonly stepKeys: readonly string[];
  /** Per step: a JSON array of the steps it runs after, directly or not (whose outputs it reads). */
  readonly stepUpstream: readonly string[];
  /** Some step of the queue this engine defines has a concurrency key (R50). */
  readonly keyed: boolean;
  /** Some step of the queue this engine defines spends a rate limit (R51). */
  readonly rated: boolean;
  /** The engine's rate limits (R51). */
  readonly rateLimits: RateLimitPlan;
}

/** A task a one-statement claim leased, with what its attempt needs to start. */
export interface LeasedTaskWithInputs {
  readonly task: LeasedTask;
  readonly workflowName: string;
  /** The version its workflow records (R54); null for one stored before versions. */
  readonly workflowVersion: string | null;
  readonly input: unknown;
  /** Outputs of the step's upstream steps by step name. */
  readonly outputs: Readonly<Record<string, unknown>>;
  /** Its workflow is a child its parent step awaits (R45): its end may move that step. */
  readonly awaitedChild: boolean;
  /** Its workflow's stored trace context (R57), read with the lease: null when none is stored. */
  readonly traceParent: TaskTraceParent | null;
}

export interface ClaimStatementResult {
  /**
   * False when some ready task is one the statement may not decide (its deadline passed, its
   * parent's state is not in the plan, its step is unknown): nothing was written, and the
   * caller decides in full.
   */
  readonly decided: boolean;
  readonly claimed: readonly LeasedTaskWithInputs[];
  /** Candidates left because another transaction held their workflow. */
  readonly skipped: number;
  readonly now: Date;
  /** Milliseconds to the earliest next slot of a rate limit key this claim spent (R51). */
  readonly nextSlotInMs: number | null;
}

/**
 * A claim in one statement (R4, R8), for the common case: the same candidates as
 * `taskClaimLoad` (ready rows in claim order, `run_at − priority` (R49), SKIP LOCKED, their
 * workflows SKIP LOCKED), then, if every one is covered by the plan, the claim edges, the
 * parents' new states and the log rows in the order the full decision writes them (each
 * task's edge, then its parent's edge if the parent changed). Candidates are tasks of
 * workflows whose every step this engine defines (`definedWorkflowStep`); a workflow it does
 * not define is still left alone, as in the full decision. If any candidate is not covered,
 * nothing is written. A paused queue (R53) gives no candidates.
 */
export async function taskClaimInOneStatement(
  db: Db,
  plan: ClaimStatementPlan,
): Promise<ClaimStatementResult> {
  const { rows } = await executeDirect(db, claimStatement(plan));
  const summary = rows[0];
  if (summary === undefined) throw new Error('the claim statement returned no summary row');
  const claimed = rows
    .filter((row) => row.position !== null)
    .map((row) => ({
      task: leasedTaskFromRow(row),
      workflowName: row.w_name,
      workflowVersion: row.w_version,
      input: row.w_input,
      outputs: row.outputs ?? {},
      awaitedChild: row.w_awaited_child,
      traceParent: traceParentFromRow(row.w_trace_context, row.t_replay_count),
    }));
  return {
    decided: summary.decided,
    claimed,
    // Busy workflows, and keyed tasks whose key another claim granted meanwhile (R50).
    skipped:
      Number(summary.candidate_count) - Number(summary.ready_count) + Number(summary.lost_count),
    now: summary.summary_now,
    nextSlotInMs: summary.next_slot_in_ms,
  };
}

/** The smallest power of two at or above `limit`: the claim statement's literal bound. */
function limitBound(limit: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1, limit)));
}

/** The statement of `taskClaimInOneStatement`, for it and for EXPLAIN in tests. */
export function claimStatement(plan: ClaimStatementPlan) {
  // Plain tasks in claim order. The inner limit is a literal (the limit rounded up to a power
  // of two): it tells the planner how few rows come, so the generic plan it caches and reuses
  // (instead of planning this statement on every call) probes indexes as a custom plan would,
  // and a connection holds a handful of such plans, not one per limit. The outer limit takes
  // exactly the rows wanted; rows are locked only as they are taken.
  const now = sql`(select now from clock)`;
  const plainCandidates = sql`
      select *, ${plainCandidateKeyColumns} from (
        select id, workflow_id, step, ${claimAtSql(sql`t`)} as claim_at, deadline_at,
          ${rateCandidateColumns(sql`t`)}
        from causeway_tasks as t
        where state = ${sql.lit(plan.from)} and queue = ${plan.queue}
          and concurrency_key is null
          and ${dueSql(sql`t`, now)}
          and ${definedWorkflowStep(sql`t`, plan.stepKeys)}
          and ${queueNotPausedSql(plan.queue)}${
            plan.rated
              ? sql`
          and ${rateOpenSql(sql`t`, now)}`
              : sql``
          }
        order by ${claimAtSql(sql`t`)}
        limit ${sql.lit(limitBound(plan.limit))}
        for update skip locked
      ) as bounded
      limit ${plan.limit}
  `;
  return sql<
    LeasedTaskRow & {
      readonly w_name: string;
      readonly w_version: string | null;
      readonly w_input: unknown;
      readonly w_awaited_child: boolean;
      readonly w_trace_context: TraceCarrier | null;
      readonly t_replay_count: number;
      readonly position: string | null;
      readonly outputs: Record<string, unknown> | null;
      readonly candidate_count: string;
      readonly ready_count: string;
      readonly lost_count: string;
      readonly decided: boolean;
      readonly summary_now: Date;
      readonly next_slot_in_ms: number | null;
    }
  >`
    ${preparedSql}
    -- Read after the statement's snapshot (causeway_clock_now): later than every edge it saw.
    with clock as materialized (select causeway_clock_now() as now),
    ${
      plan.keyed
        ? sql`plain_candidates as materialized (${plainCandidates}),
    -- Keyed tasks (R50) merge with the plain ones in claim order; a queue with no keyed step
    -- in this engine's definitions leaves them out.
    candidates as materialized (
      select * from (
        select * from plain_candidates
        union all
        select * from (${keyedCandidatesSql({
          queue: plan.queue,
          limit: plan.limit,
          now,
          stepKeys: plan.stepKeys,
          rated: plan.rated,
        })}) as keyed
      ) as merged
      order by claim_at
      limit ${plan.limit}
    ),`
        : sql`candidates as materialized (${plainCandidates}),`
    }
    locked as materialized (
      select id, name, version, state, input, trace_context,
        parent_task_id is not null and not detached as awaited_child
      from causeway_workflows
      -- An array, not a semi-join: primary-key probes, never a hash of the whole table.
      where id = any(array(select workflow_id from candidates))
      order by id
      for update skip locked
    ),
    ready as materialized (
      select c.id, c.workflow_id, c.step, c.deadline_at, l.state as parent_state, l.name,
        l.version, l.input, l.awaited_child, l.trace_context, row_number() over (order by c.claim_at, c.id) as position,
        n.name is not null as name_defined, s.name is not null as step_defined,
        s.upstream, m.after_state, c.concurrency_group, c.concurrency_key, c.grant_version,
        c.head_version, c.rate_name, c.rate_key, c.rate_cost
      from candidates as c
      join locked as l on l.id = c.workflow_id
      left join unnest(${constantArrayLiteral(plan.definedNames)}::text[]) as n(name)
        on n.name = l.name
      left join unnest(
        ${constantArrayLiteral(plan.stepNames)}::text[],
        ${constantArrayLiteral(plan.stepVersions)}::text[],
        ${constantArrayLiteral(plan.stepLatest)}::text[],
        ${constantArrayLiteral(plan.stepSteps)}::text[],
        ${constantArrayLiteral(plan.stepUpstream)}::jsonb[]
      ) as s(name, version, latest, step, upstream)
        on s.name = l.name and s.step = c.step and s.version = coalesce(l.version, s.latest)
      left join unnest(
        ${constantArrayLiteral(plan.parentFrom)}::text[],
        ${constantArrayLiteral(plan.parentTo)}::text[]
      ) as m(from_state, after_state) on m.from_state = l.state
    ),
    decision as materialized (
      select not exists (
        select 1 from ready, clock
        where ready.name_defined and (not ready.step_defined or ready.after_state is null
          or ready.deadline_at <= clock.now)
      ) as decided
    ),
    ${grantCtes(plan)}
    task_update as (
      update causeway_tasks as t set
        state = ${sql.lit(plan.to)},
        ${setList(
          effectAssignments(plan.effects, {
            now: sql`clock.now`,
            holder: sql`${plan.holder}`,
            leaseMs: sql`${plan.leaseMs}::integer`,
          }),
          't',
        )},
        updated_at = clock.now
      from claimable as c, clock
      -- Conditional on the state it was read in (R1), like every other write of an edge.
      where t.id = c.id and t.state = ${sql.lit(plan.from)}
      -- What the attempt reads (pg parses every column it is sent), and its workflow's: the
      -- trace context too, a null when none is stored, so a traced attempt needs no read of its own.
      returning ${leasedTaskColumns}, c.position, c.name as w_name, c.version as w_version,
        c.input as w_input, c.awaited_child as w_awaited_child,
        c.trace_context as w_trace_context, t.replay_count as t_replay_count, c.upstream
    ),
    -- Each parent once, changed by its first claim in claim order. A CTE of its own, so the
    -- update joins a plain scan (see the settle statement on following concurrent updates).
    parent_change as materialized (
      select distinct on (workflow_id) workflow_id, parent_state, after_state, position, step
      from claimable
      where after_state <> parent_state
      order by workflow_id, position
    ),
    workflow_update as (
      update causeway_workflows as w set state = c.after_state, updated_at = clock.now
      from parent_change as c, clock
      where w.id = c.workflow_id and w.state = c.parent_state
      returning w.id, c.parent_state, c.after_state, c.position, c.step
    ),
    log_insert as (
      insert into causeway_transitions (workflow_id, task_id, step, from_state, to_state,
        reason, error_category, error_summary, actor, attempt, at, detail)
      select workflow_id, task_id, step, from_state, to_state, ${plan.reason}, null, null,
        ${plan.actor}, attempt, clock.now, detail
      from (
        select workflow_id, id as task_id, step, ${sql.lit(plan.from)} as from_state, state as to_state,
          attempt, null::jsonb as detail, position * 2 as sort
        from task_update
        union all
        select id, null, null, parent_state, after_state, 0, jsonb_build_object('step', step),
          position * 2 + 1
        from workflow_update
      ) as v, clock
      order by sort
      returning 1
    ),
    announce as (
      select pg_notify(${transitionsChannel}, '') where exists (select 1 from claimable)
    ),
    summary as materialized (
      -- Fails the statement, undoing its writes, if it wrote other than it decided.
      select *, causeway_written_as_decided(decided_count, written_count) as checked
      from (select (select count(*) from candidates) as candidate_count,
        (select count(*) from ready) as ready_count,
        (select decided from decision) as decided,
        ${
          plan.keyed || plan.rated
            ? sql`(select count(*) from decided_ready) - (select count(*) from claimable)`
            : sql`0`
        } as lost_count,
        (select now from clock) as summary_now,
        ${
          plan.rated
            ? sql`extract(epoch from (select min(blocked_until) from rate_spend)
                - (select now from clock))::float8 * 1000`
            : sql`null::float8`
        } as next_slot_in_ms,
        (select count(*) from log_insert) as log_count,
        (select count(*) from announce) as announce_count,
        (select count(*) from claimable) + (select count(*) from parent_change)
          as decided_count,
        (select count(*) from task_update) + (select count(*) from workflow_update)
          as written_count) as counts
    )
    -- The summary once, on the first row (pg parses every column of every row it is sent).
    select tu.*, first.candidate_count, first.ready_count, first.lost_count, first.decided,
      first.summary_now, first.next_slot_in_ms,
      -- Each upstream step's row by the unique (workflow_id, step) index, whatever the
      -- statistics say about workflow_id alone.
      case when jsonb_array_length(tu.upstream) > 0 then (
        select jsonb_object_agg(u.step, (
          select s.output from causeway_tasks as s
          where s.workflow_id = tu.workflow_id and s.step = u.step))
        from jsonb_array_elements_text(tu.upstream) as u(step)
      ) end as outputs
    from summary left join task_update as tu on true
    left join summary as first
      on tu.position is null or tu.position = (select min(position) from task_update)
    order by tu.position`;
}

/**
 * The CTEs from `ready` to `claimable`, the tasks the claim leases: all the decided ones, or,
 * for a queue with keyed (R50) or rate-limited (R51) steps, those whose rate limits have room
 * (`rateFitCtes`) and whose keys are granted (`keyGrantCtes`; a claim that lost the race for a
 * key's version takes none of its tasks), then the rate spent by what is leased.
 */
function grantCtes(plan: ClaimStatementPlan): RawBuilder<unknown> {
  const decided = sql`select ready.* from ready, decision where decision.decided and ready.name_defined`;
  if (!plan.keyed && !plan.rated) return sql`claimable as materialized (${decided}),`;
  const now = sql`(select now from clock)`;
  const passed = plan.rated ? sql`rate_passed` : sql`decided_ready`;
  const keyed = plan.keyed
    ? sql`${keyGrantCtes(plan.queue, passed)},
    claimable as materialized (
      select r.* from ${passed} as r
      where r.concurrency_key is null or exists (
        select 1 from key_grant as k
        where k.concurrency_group = r.concurrency_group and k.concurrency_key = r.concurrency_key)
    ),`
    : sql`claimable as materialized (select * from ${passed}),`;
  return sql`decided_ready as materialized (${decided}),
    ${plan.rated ? rateFitCtes(plan.rateLimits, sql`decided_ready`, now) : sql``}
    ${keyed}
    ${plan.rated ? sql`${rateSpendCte(sql`claimable`, now)},` : sql``}`;
}
