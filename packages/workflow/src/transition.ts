import type { ErrorCategory } from './error-categories';
import type { ReasonCode, TaskState, WorkflowState } from './machine-table';

/**
 * One row of the append-only transition log (R24), as the domain sees it. Task rows have a
 * task id and step; workflow rows have neither.
 */
export interface Transition {
  readonly id: string;
  readonly workflowId: string;
  readonly taskId: string | null;
  readonly step: string | null;
  readonly from: TaskState | WorkflowState | null;
  readonly to: TaskState | WorkflowState;
  readonly reason: ReasonCode;
  readonly errorCategory: ErrorCategory | null;
  readonly errorSummary: string | null;
  readonly actor: string;
  readonly attempt: number;
  /** Database time of the edge. */
  readonly at: Date;
  readonly detail: Readonly<Record<string, unknown>> | null;
}
