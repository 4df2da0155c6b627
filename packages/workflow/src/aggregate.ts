import { isTerminalTaskState, type TaskState, type WorkflowState } from './states';

/**
 * The parent's state as one pure fold over its children's states (SPEC §4), rules
 * evaluated top to bottom. A workflow has at least one step, so `children` is never empty.
 */
export function aggregateWorkflowState(children: readonly TaskState[]): WorkflowState {
  if (children.length === 0) throw new RangeError('a workflow has at least one task');
  const some = (state: TaskState) => children.includes(state);
  if (some('dead')) return 'dead';
  if (children.every((state) => state === 'succeeded')) return 'succeeded';
  if (children.every(isTerminalTaskState) && some('cancelled')) return 'cancelled';
  if (some('cancel_requested')) return 'cancel_requested';
  if (some('leased') || some('awaiting_receipt')) return 'running';
  if (some('succeeded') && children.some((state) => !isTerminalTaskState(state))) return 'running';
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
