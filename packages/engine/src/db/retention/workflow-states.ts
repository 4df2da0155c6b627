import {
  nonTerminalTaskStates,
  promotionRule,
  terminalWorkflowStates,
} from '@causeway/workflow/internal';
import { type RawBuilder, sql } from 'kysely';

/** Terminal workflow states as SQL literals (read off the domain, like task-states.ts). */
export const terminalWorkflowStatesSql = sql.join(
  terminalWorkflowStates.map((state) => sql.lit(state)),
);

/**
 * Task states that still move in a terminal workflow: every non-terminal state but the one a
 * task waits in for its upstream steps (promotion's `from`). Such a task moves only when an
 * upstream step succeeds: while another task of the workflow still moves (a `dead` workflow
 * may have a leased branch), that task holds the workflow; once none does, the pending ones
 * stay pending for good (R59). An operator's replay moves a dead task first, which holds the
 * workflow again.
 */
const stillMovingTaskStatesSql = sql.join(
  nonTerminalTaskStates
    .filter((state) => state !== promotionRule.from)
    .map((state) => sql.lit(state)),
);

/** Whether the workflow row `alias` is not terminal or has a task that still moves. */
function movesSql(alias: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`(${alias}.state not in (${terminalWorkflowStatesSql})
    or exists (select 1 from causeway_tasks as t
                where t.workflow_id = ${alias}.id and t.state in (${stillMovingTaskStatesSql})))`;
}

/**
 * Whether the workflow row `w` can still move: its state is not terminal, or one of its tasks
 * is in a state that still moves, or it is an awaited child whose parent still moves (the
 * parent step's output reads its children, R45). What a retention run counts as live.
 */
export function workflowStillMovesSql(): RawBuilder<boolean> {
  return sql<boolean>`(${movesSql(sql`w`)}
    or (w.parent_workflow_id is not null and not w.detached
        -- A scalar subquery, probed by primary key per child: an EXISTS here may be planned as
        -- a hash of the whole workflows table.
        and coalesce((select ${movesSql(sql`p`)} from causeway_workflows as p
                       where p.id = w.parent_workflow_id), false)))`;
}
