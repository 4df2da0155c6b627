import { type RawBuilder, sql } from 'kysely';
import { constantArrayLiteral } from '../array-literal';

// CTEs the one-statement settle and the one-statement send (db/events) both write.

/** The engine's steps, as the `step` CTE the promotion reads. */
export interface StepColumns {
  /**
   * Per (workflow, version, step): workflow name, its version, the name's latest version (what
   * a workflow stored without one takes), step, its direct upstream steps (JSON), all its
   * upstream steps (JSON), order.
   */
  readonly stepNames: readonly string[];
  readonly stepVersions: readonly string[];
  readonly stepLatest: readonly string[];
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
        ${constantArrayLiteral(plan.stepVersions)}::text[],
        ${constantArrayLiteral(plan.stepLatest)}::text[],
        ${constantArrayLiteral(plan.stepSteps)}::text[],
        ${constantArrayLiteral(plan.stepAfter)}::jsonb[],
        ${constantArrayLiteral(plan.stepUpstream)}::jsonb[],
        ${constantArrayLiteral(plan.stepOrder)}::integer[]
      ) as s(name, version, latest, step, after, upstream, ord)
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
