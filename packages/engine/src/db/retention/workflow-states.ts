import { nonTerminalTaskStates, promotionRule, terminalWorkflowStates } from '@causeway/workflow';
import { type RawBuilder, sql } from 'kysely';

/** Terminal workflow states as SQL literals (read off the domain, like task-states.ts). */
export const terminalWorkflowStatesSql = sql.join(
  terminalWorkflowStates.map((state) => sql.lit(state)),
);

/**
 * Task states that still move in a terminal workflow: every non-terminal state but the one a
 * task waits in for its upstream steps (promotion's `from`). Such a task moves only when its
 * upstream steps succeed, and in a finished workflow none will: the steps after a dead one
 * stay pending for good (R59). An operator's replay first moves a dead task, which revives
 * the workflow, so it is seen then.
 */
const stillMovingTaskStatesSql = sql.join(
  nonTerminalTaskStates
    .filter((state) => state !== promotionRule.from)
    .map((state) => sql.lit(state)),
);

/**
 * Whether the workflow row `w` can still move: its state is not terminal, or one of its tasks
 * is in a state that still moves. What a retention run counts as live.
 */
export function workflowStillMovesSql(): RawBuilder<boolean> {
  return sql<boolean>`(w.state not in (${terminalWorkflowStatesSql})
    or exists (select 1 from causeway_tasks as t
                where t.workflow_id = w.id and t.state in (${stillMovingTaskStatesSql})))`;
}
