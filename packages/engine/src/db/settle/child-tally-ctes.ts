import { sql } from 'kysely';
import {
  childrenAwaitingStateSql,
  failedStatesSql,
  succeededStateSql,
  terminalStatesSql,
} from '../task-states';

// The one-statement settle's part for results of child workflows (R45): they count into the
// tally of the step awaiting them while they cannot settle it; the rest is the full decision's.
// The CTEs read the settle statement's `request`, `locked_workflow`, `locked_task`,
// `candidate` and `parent`, in this order of the statement (`awaitingStepCtes` come before
// `locked_workflow`, which waits for them). A workflow's terminal states are
// named as a task's, so the task states' literals serve for both.

/**
 * Open children below which an awaiting step is locked for its room: twice the results one
 * batch may hold (the result writer's batches), so that its room as the snapshot has it cannot
 * run out before the update unless several full batches count its children at once.
 */
const nearEndChildren = 1_000;

/** The steps awaiting the results' children: as the snapshot has them, latest near their end. */
export const awaitingStepCtes = sql`
    -- The steps awaiting the results' child workflows (R45), as this statement's snapshot has
    -- them (a child's parent columns never change): not locked, so that other results for
    -- their children wait only for the tally's update (below), which checks the room again
    -- on the latest row.
    awaiting_snapshot as materialized (
      select id, state, children_total, children_succeeded, children_failed
      from causeway_tasks
      where id = any(array(
        select parent_task_id from causeway_workflows
        where id = any(array(select workflow_id from request))
          and parent_task_id is not null and not detached))
    ),
    -- Near its end, a step is locked here and read at its latest: statements beside this one
    -- could otherwise count what the snapshot left as room, and this one would give way to
    -- the full decision at its update. Far from it, so many children would have to end
    -- meanwhile that it does not lock (the update still checks).
    awaiting_near_end as materialized (
      select id, state, children_total, children_succeeded, children_failed
      from causeway_tasks
      where id = any(array(
        select id from awaiting_snapshot
        where children_total - children_succeeded - children_failed <= ${sql.lit(nearEndChildren)}))
      order by id
      for update
    ),
    awaiting_step as materialized (
      select * from awaiting_near_end
      union all
      select * from awaiting_snapshot
      where id not in (select id from awaiting_near_end)
    )`;

/** Each awaiting step's room after the batch; the children with a failed task. */
export const childRoomCtes = sql`
    -- Per awaiting step, the children still open if every result of the batch for one of
    -- them ended it: a success decides a step only when none is open (R45), so while one is,
    -- the results only count.
    awaiting_room as materialized (
      select s.id, s.children_total - s.children_succeeded - s.children_failed - count(*)
        as open_after
      from request as r
      join locked_workflow as w on w.id = r.workflow_id
      join awaiting_step as s on s.id = w.parent_task_id
      where s.state = ${childrenAwaitingStateSql}
      group by s.id, s.children_total, s.children_succeeded, s.children_failed
    ),
    -- Child workflows with a failed task: a completion might end them failed, which may
    -- decide their step (fail fast).
    failed_child as materialized (
      select distinct workflow_id from locked_task where state in (${failedStatesSql})
    )`;

/**
 * The results the statement decides (`cause`): a step's children's results in the batch are
 * taken all together or not at all.
 */
export const childCauseCtes = sql`
    -- A step's children's results in the batch are taken here all together or not at all, so
    -- that none is applied out of its request order: only when each is a candidate, none of
    -- their workflows has a failed task or was set aside by a replay, and a child stays open
    -- after them all. They then only count into the step's tally (R45); a result that may
    -- settle the step is the full decision's.
    child_step_taken as materialized (
      select room.id from awaiting_room as room
      where room.open_after > 0 and not exists (
        select 1 from locked_workflow as w
        left join candidate as c on c.workflow_id = w.id
        left join failed_child as f on f.workflow_id = w.id
        where w.parent_task_id = room.id and not w.detached
          and (c.workflow_id is null or w.replaced or f.workflow_id is not null))
    ),
    cause as materialized (
      select c.* from candidate as c
      left join child_step_taken as taken on taken.id = c.parent_task_id
      where c.parent_task_id is null or c.detached or taken.id is not null
    ),`;

/**
 * `locked_workflow`'s condition that it comes after the steps locked near their end: a step's
 * row before its children's, as a cancel of its workflow takes them.
 */
export const afterAwaitingSteps = sql`and (select count(*) from awaiting_near_end) >= 0`;

/** The children the statement ends, by step. */
export const childEndCtes = sql`
    -- Awaited children whose outcome class this statement changes (R45)…
    child_change as materialized (
      select w.parent_task_id as task_id, pa.parent_after
      from parent as pa
      join locked_workflow as w on w.id = pa.workflow_id
      where w.parent_task_id is not null and not w.detached
        and pa.parent_before not in (${terminalStatesSql})
        and pa.parent_after in (${terminalStatesSql})
    ),
    -- …each a success (a completion of a child with no failed task), counted into its step.
    child_end as materialized (
      select task_id, count(*) as succeeded
      from child_change
      where parent_after = ${succeededStateSql}
      group by task_id
    )`;

/** The tallies moved, on the latest rows. */
export const tallyUpdateCte = sql`
    tally_update as (
      update causeway_tasks as t set children_succeeded = t.children_succeeded + e.succeeded
      from child_end as e
      -- On the latest row (EvalPlanQual): if other children ended since this statement's
      -- snapshot and these would end the last one, nothing matches, the self-check fails the
      -- statement and the full decision settles the step (R60).
      where t.id = e.task_id and t.state = ${childrenAwaitingStateSql}
        and t.children_succeeded + t.children_failed + e.succeeded < t.children_total
      returning e.succeeded
    )`;
