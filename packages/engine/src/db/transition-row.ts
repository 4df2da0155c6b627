export interface NewTransitionRow {
  readonly workflowId: string;
  readonly taskId: string | null;
  readonly step: string | null;
  readonly from: string | null;
  readonly to: string;
  readonly reason: string;
  readonly errorCategory: string | null;
  readonly errorSummary: string | null;
  readonly actor: string;
  readonly attempt: number;
  readonly detail: Readonly<Record<string, unknown>> | null;
}
