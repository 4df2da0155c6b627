import { terminalWorkflowStates } from '@causeway/workflow';
import { sql } from 'kysely';

/** Terminal workflow states as SQL literals (read off the domain, like task-states.ts). */
export const terminalWorkflowStatesSql = sql.join(
  terminalWorkflowStates.map((state) => sql.lit(state)),
);
