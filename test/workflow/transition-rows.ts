import type { Transition } from '@causeway/workflow';

/**
 * Transition rows for the narrative's tests: each call a row with the next id, one second
 * after the one before, with `defaults` and then `overrides` over a plain task row.
 */
export function transitionRows(defaults: Partial<Transition> = {}) {
  let nextId = 0;
  return (overrides: Partial<Transition> & Pick<Transition, 'to' | 'reason'>): Transition => {
    nextId += 1;
    return {
      id: String(nextId),
      workflowId: 'wf',
      taskId: 't1',
      step: 'publish',
      from: null,
      errorCategory: null,
      errorSummary: null,
      actor: 'client',
      attempt: 0,
      at: new Date(Date.UTC(2026, 2, 1, 10, 0, nextId)),
      detail: null,
      ...defaults,
      ...overrides,
    };
  };
}
