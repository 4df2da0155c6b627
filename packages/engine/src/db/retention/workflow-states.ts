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

/**
 * Whether the workflow row `w` can still move: its state is not terminal, or one of its tasks
 * is in a state that still moves, or it is an awaited child whose parent is still kept (a
 * parent step's output and a replay of it read its children, R45, R47: children go after their
 * parent). What a retention run counts as live.
 */
export function workflowStillMovesSql(): RawBuilder<boolean> {
  return sql<boolean>`(w.state not in (${terminalWorkflowStatesSql})
    or exists (select 1 from causeway_tasks as t
                where t.workflow_id = w.id and t.state in (${stillMovingTaskStatesSql}))
    or (w.parent_workflow_id is not null and not w.detached
        and exists (select 1 from causeway_workflows as p where p.id = w.parent_workflow_id)))`;
}
