import { type RawBuilder, sql } from 'kysely';
import { constantArrayLiteral } from '../array-literal';
import type { SettleEdgePlan } from '../edge-plans';

/**
 * The CTEs that follow an edge in the one-statement settle and send alike: the steps the
 * promotion rule makes ready, and the parent's new state. They read the statement's own CTEs
 * by name: `cause` (one row per workflow: `workflow_id`, `parent_before`), `after_cause`
 * (every task of those workflows as it is after the edge: `id`, `workflow_id`, `step`,
 * `queue`, `attempt`, `deadline_at`, `name`, `state`) and `step` (the engine's steps: `name`,
 * `step`, `after`, `upstream`, `ord`).
 */
export function promotionCtes(
  plan: Pick<
    SettleEdgePlan,
    | 'upstreamState'
    | 'promoteFrom'
    | 'promoteTo'
    | 'stateOrder'
    | 'presenceMasks'
    | 'presenceStates'
  >,
): RawBuilder<unknown> {
  return sql`
    -- A pending step is promoted when each of its upstream steps has succeeded: counted with
    -- joins (linear in the batch) rather than a correlated subquery per pending step.
    promoted as materialized (
      select a.id, a.workflow_id, a.step, a.queue, a.attempt, a.deadline_at, s.ord, s.upstream
      from after_cause as a
      join step as s on s.name = a.name and s.step = a.step
      left join lateral jsonb_array_elements_text(s.after) as u(step) on true
      left join after_cause as done
        on done.workflow_id = a.workflow_id and done.step = u.step
          and done.state = ${sql.lit(plan.upstreamState)}
      where a.state = ${sql.lit(plan.promoteFrom)}
      group by a.id, a.workflow_id, a.step, a.queue, a.attempt, a.deadline_at, s.ord, s.upstream
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
    )`;
}

/** The engine's steps, as the `step` CTE the promotion reads. */
export interface StepColumns {
  /** Per (workflow, step): workflow name, step, its direct upstream steps (JSON), all its upstream steps (JSON), order. */
  readonly stepNames: readonly string[];
  readonly stepSteps: readonly string[];
  readonly stepAfter: readonly string[];
  readonly stepUpstream: readonly string[];
  readonly stepOrder: readonly number[];
}

/** The `step` CTE: the engine's steps as constants. */
export function stepCte(plan: StepColumns): RawBuilder<unknown> {
  return sql`
    step as materialized (
      select * from unnest(
        ${constantArrayLiteral(plan.stepNames)}::text[],
        ${constantArrayLiteral(plan.stepSteps)}::text[],
        ${constantArrayLiteral(plan.stepAfter)}::jsonb[],
        ${constantArrayLiteral(plan.stepUpstream)}::jsonb[],
        ${constantArrayLiteral(plan.stepOrder)}::integer[]
      ) as s(name, step, after, upstream, ord)
    )`;
}

/** The parent's new state, written where it changed (reads `parent` and `clock`). */
export const parentUpdateCte = sql`
    workflow_update as (
      update causeway_workflows as w set state = p.parent_after, updated_at = clock.now
      from parent as p, clock
      where w.id = p.workflow_id and p.parent_after <> p.parent_before
        and w.state = p.parent_before
      returning w.id
    )`;
