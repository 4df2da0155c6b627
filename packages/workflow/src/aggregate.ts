import { isTerminalTaskState, type TaskState, type WorkflowState } from './states';

/**
 * The parent's state as one pure fold over its children's states (docs/state-machine.md), rules
 * evaluated top to bottom. A workflow has at least one step, so `children` is never empty.
 * One pass and no closures: it runs for every workflow a submit plans.
 */
export function aggregateWorkflowState(children: readonly TaskState[]): WorkflowState {
  if (children.length === 0) throw new RangeError('a workflow has at least one task');
  let anyDead = false;
  let allSucceeded = true;
  let allTerminal = true;
  let anyCancelled = false;
  let anyCancelRequested = false;
  let anyRunning = false;
  let anySucceeded = false;
  for (const state of children) {
    if (state === 'dead') anyDead = true;
    if (state !== 'succeeded') allSucceeded = false;
    if (!isTerminalTaskState(state)) allTerminal = false;
    if (state === 'cancelled') anyCancelled = true;
    if (state === 'cancel_requested') anyCancelRequested = true;
    if (state === 'leased' || state === 'awaiting_receipt') anyRunning = true;
    if (state === 'succeeded') anySucceeded = true;
  }
  if (anyDead) return 'dead';
  if (allSucceeded) return 'succeeded';
  if (allTerminal && anyCancelled) return 'cancelled';
  if (anyCancelRequested) return 'cancel_requested';
  if (anyRunning) return 'running';
  if (anySucceeded && !allTerminal) return 'running';
  return 'queued';
}

/** The aggregation table as data, for the generated docs (same order as the fold above). */
export const aggregationRules: readonly { readonly state: WorkflowState; readonly when: string }[] =
  Object.freeze([
    { state: 'dead', when: 'any child is `dead`' },
    { state: 'succeeded', when: 'every child is `succeeded`' },
    { state: 'cancelled', when: 'every child is terminal, at least one `cancelled`, none `dead`' },
    { state: 'cancel_requested', when: 'any child is `cancel_requested`' },
    {
      state: 'running',
      when: 'any child is `leased` or `awaiting_receipt`, or some have succeeded and others are not terminal',
    },
    { state: 'queued', when: 'otherwise (nothing started yet)' },
  ]);
