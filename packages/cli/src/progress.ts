/**
 * Steps done out of total for one workflow, kept from its transitions: a step is done once
 * its task is in a terminal state (succeeded, cancelled or dead), so the bar of a workflow
 * that ended is full whichever way it ended.
 */
export interface TransitionRow {
  id: string;
  workflowId: string;
  taskId: string | null;
  step: string | null;
  from: string | null;
  to: string;
  reason: string;
  errorCategory: string | null;
  errorSummary: string | null;
  actor: string;
  attempt: number;
  at: string;
}

const terminal = new Set(['SUCCEEDED', 'CANCELLED', 'DEAD']);

export function isTerminal(state: string): boolean {
  return terminal.has(state);
}

export class WorkflowProgress {
  private readonly states = new Map<string, string>();

  /**
   * `taskIds`: every task of the workflow (all are created with it); `history`: its rows
   * before the first one this tracker will be given.
   */
  constructor(
    readonly workflowId: string,
    readonly name: string,
    private readonly taskIds: readonly string[],
    history: readonly Pick<TransitionRow, 'taskId' | 'to'>[] = [],
  ) {
    for (const row of history) this.apply(row);
  }

  apply(row: Pick<TransitionRow, 'taskId' | 'to'>): void {
    if (row.taskId !== null) this.states.set(row.taskId, row.to);
  }

  get total(): number {
    return this.taskIds.length;
  }

  get done(): number {
    return this.taskIds.filter((id) => isTerminal(this.states.get(id) ?? '')).length;
  }
}

/** `[####------] 2/5` */
export function progressBar(done: number, total: number, width = 10): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}`;
}
