import { type RawBuilder, sql } from 'kysely';
import { typedConstantSql } from '../array-literal';
import {
  type Assignments,
  caseSetList,
  effectAssignments,
  setList,
  valueSql,
} from '../edge-assignments';
import { wakeupChannel } from '../notify-channels';
import { type EventSendShape, stepLookups } from './event-send-shape';

/**
 * The parts of the one-statement send that make steps ready (the promotion edge) after an
 * event completed their upstream step: the CTEs that find them, and their branch in the task
 * update, the log, the written-as-decided count, the parent's state and the wake-ups. Without
 * promotions (no step waiting for the send's events has a step after it, so none can become
 * ready) every part is empty and the parent's state is the tasks' states as the events leave
 * them: fewer plan nodes to start at every send.
 */
export interface PromotionParts {
  /** `upstream_done`, `promoted`, `promoted_ids`, each followed by a comma. */
  readonly ctes: RawBuilder<unknown>;
  /** A task's state for its parent's presence mask, for a row `a` of `after_cause`. */
  readonly stateForParent: RawBuilder<unknown>;
  /** `union all` the promoted steps, for the task update's source. */
  readonly updateBranch: RawBuilder<unknown>;
  /** `union all` the promotions' log rows. */
  readonly logBranch: RawBuilder<unknown>;
  /** `union all` the promoted rows, for the count of conditional writes decided. */
  readonly decidedBranch: RawBuilder<unknown>;
  /** The wake-ups of the promoted steps' queues, a summary column. */
  readonly wokenColumn: RawBuilder<unknown>;
  /** The task update's `set` list: the event's edge, or (`u.by_event` false) the promotion's. */
  readonly setList: RawBuilder<unknown>;
}

/** The parts for this shape, with or without promotions; `eventAssignments` is the event's edge. */
export function promotionParts(
  shape: EventSendShape,
  promotes: boolean,
  eventAssignments: Assignments,
): PromotionParts {
  if (!promotes) {
    return {
      ctes: sql``,
      stateForParent: sql`a.state`,
      updateBranch: sql``,
      logBranch: sql``,
      decidedBranch: sql``,
      wokenColumn: sql`0 as woken`,
      setList: sql`${setList(eventAssignments, 't')}, output = u.output::jsonb`,
    };
  }
  const lit = (value: string) => sql.lit(value);
  const promoteAssignments = effectAssignments(shape.promoteEffects, {
    now: sql`clock.now`,
    undelayed: true,
  });
  const stepKey = sql`(t.name || E'\n' || t.step)`;
  const { stepAfter, stepOrder } = stepLookups(shape);
  const jsonConstant = (value: unknown) => typedConstantSql(JSON.stringify(value), 'jsonb');
  return {
    ctes: sql`
    -- Per workflow, its steps in the state promotion asks of every upstream step.
    upstream_done as materialized (
      select coalesce(jsonb_object_agg(workflow_id::text, steps), '{}') as by_workflow
      from (
        select workflow_id, jsonb_agg(step) as steps from after_cause
        where state = ${lit(shape.upstreamState)}
        group by workflow_id
      ) as d
    ),
    promoted as materialized (
      select t.id, t.workflow_id, t.step, t.queue, t.attempt, t.cause_task,
        (${jsonConstant(stepOrder)} ->> ${stepKey})::integer as ord
      from after_cause as t
      where t.state = ${lit(shape.promoteFrom)}
        -- A step this engine does not define has no entry, so it is never promoted.
        and (${jsonConstant(stepAfter)} -> ${stepKey}) <@ coalesce(
          (select by_workflow from upstream_done) -> t.workflow_id::text, '[]'::jsonb)
    ),
    promoted_ids as materialized (
      select coalesce(jsonb_object_agg(id::text, true), '{}') as ids from promoted
    ),`,
    stateForParent: sql`case when (select ids from promoted_ids) ? a.id::text
      then ${lit(shape.promoteTo)} else a.state end`,
    updateBranch: sql`
        union all
        select p.id, ${lit(shape.promoteFrom)}, ${lit(shape.promoteTo)}, false, null, null
        from promoted as p`,
    logBranch: sql`
        union all
        select p.workflow_id, p.id, p.step, ${lit(shape.promoteFrom)}, ${lit(shape.promoteTo)},
          ${lit(shape.promoteReason)}, ${lit(shape.promoteActor)},
          ${valueSql(promoteAssignments, 'attempt', sql`p.attempt`)}, null, p.cause_task, 1,
          p.ord
        from promoted as p`,
    decidedBranch: sql` union all select from promoted`,
    wokenColumn: sql`(select count(pg_notify(${lit(wakeupChannel)}, queue))
          from (select distinct queue from promoted) as q) as woken`,
    setList: sql`${caseSetList(sql`u.by_event`, eventAssignments, promoteAssignments, 't')},
        output = case when u.by_event then u.output::jsonb else t.output end`,
  };
}
