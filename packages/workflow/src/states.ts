/** Task (child) states (docs/state-machine.md). Each has exactly one meaning. */
export const taskStates = [
  'pending',
  'queued',
  'leased',
  'awaiting_receipt',
  'cancel_requested',
  'succeeded',
  'cancelled',
  'dead',
] as const;
export type TaskState = (typeof taskStates)[number];

/** Terminal task states: only the operator edges `dead → queued` ever leave one. */
export const terminalTaskStates = [
  'succeeded',
  'cancelled',
  'dead',
] as const satisfies readonly TaskState[];
export type TerminalTaskState = (typeof terminalTaskStates)[number];

/** Workflow (parent) states. Always computed from the children, never set directly. */
export const workflowStates = [
  'queued',
  'running',
  'cancel_requested',
  'succeeded',
  'cancelled',
  'dead',
] as const;
export type WorkflowState = (typeof workflowStates)[number];

export const terminalWorkflowStates = [
  'succeeded',
  'cancelled',
  'dead',
] as const satisfies readonly WorkflowState[];

/** One-line meaning of each task state, used by the generated docs. */
export const taskStateMeanings: Readonly<Record<TaskState, string>> = Object.freeze({
  pending: 'accepted; waits for upstream steps; no worker may take it',
  queued: 'ready; eligible once run_at <= now() (database clock)',
  leased: 'a worker holds the lease and may be executing',
  awaiting_receipt: 'the external submission is accepted; lease released; waiting for the receipt',
  cancel_requested: 'a caller asked to stop while leased; the worker has not confirmed yet',
  succeeded: 'the side effect is confirmed',
  cancelled: 'confirmed that no further side effect will happen',
  dead: 'out of attempts, non-retryable, or side effect uncertain: needs a human',
});

export function isTerminalTaskState(state: TaskState): state is TerminalTaskState {
  return (terminalTaskStates as readonly TaskState[]).includes(state);
}

export function isTerminalWorkflowState(state: WorkflowState): boolean {
  return (terminalWorkflowStates as readonly WorkflowState[]).includes(state);
}
