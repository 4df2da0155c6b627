import type { WorkflowState } from '@causeway/workflow/internal';

/** The states `rare_state` holds: keep equal to the column's expression in migration 0021. */
export const rareWorkflowStates: readonly WorkflowState[] = Object.freeze([
  'cancel_requested',
  'cancelled',
  'dead',
]);
