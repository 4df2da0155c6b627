import type { PlannedTransition } from '@causeway/workflow/internal';
import type { NewTransitionRow } from '../../db/transition-row';

/**
 * The log row (R24) of a transition the pure machine planned. A workflow row keeps the step
 * whose edge changed the parent in its detail.
 */
export function logRowOf(workflowId: string, row: PlannedTransition): NewTransitionRow {
  if (row.kind === 'workflow') {
    return {
      workflowId,
      taskId: null,
      step: null,
      from: row.from,
      to: row.to,
      reason: row.reason,
      errorCategory: null,
      errorSummary: null,
      actor: row.actor,
      attempt: 0,
      detail: row.step === null ? null : { step: row.step },
    };
  }
  return {
    workflowId,
    taskId: row.taskId,
    step: row.step,
    from: row.edge.from,
    to: row.edge.to,
    reason: row.edge.reason,
    errorCategory: row.edge.errorCategory,
    errorSummary: row.edge.errorSummary,
    actor: row.edge.actor,
    attempt: row.edge.attempt,
    detail: row.edge.detail,
  };
}
