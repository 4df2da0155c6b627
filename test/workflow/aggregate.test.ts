import {
  aggregateWorkflowState,
  isTerminalTaskState,
  type TaskState,
  taskStates,
  type WorkflowState,
} from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';

describe('aggregateWorkflowState (the aggregation table, top to bottom)', () => {
  it.each<[TaskState[], WorkflowState]>([
    [['dead', 'leased', 'succeeded'], 'dead'],
    [['dead', 'cancel_requested'], 'dead'],
    [['succeeded', 'succeeded'], 'succeeded'],
    [['succeeded', 'cancelled', 'cancelled'], 'cancelled'],
    [['cancelled'], 'cancelled'],
    [['cancel_requested', 'pending'], 'cancel_requested'],
    [['cancel_requested', 'succeeded', 'awaiting_receipt'], 'cancel_requested'],
    [['leased', 'pending'], 'running'],
    [['awaiting_receipt', 'pending'], 'running'],
    [['succeeded', 'pending'], 'running'],
    [['succeeded', 'queued', 'pending'], 'running'],
    [['queued', 'pending', 'pending'], 'queued'],
    [['cancelled', 'pending'], 'queued'],
    [['queued'], 'queued'],
    [['succeeded', 'waiting', 'pending'], 'waiting'],
    [['waiting'], 'waiting'],
    [['waiting', 'queued'], 'queued'],
    [['waiting', 'leased', 'succeeded'], 'running'],
    [['waiting', 'cancel_requested'], 'cancel_requested'],
    [['waiting', 'dead'], 'dead'],
    [['awaiting_children', 'pending'], 'running'],
    [['waiting', 'awaiting_children'], 'running'],
    [['awaiting_children', 'cancel_requested'], 'cancel_requested'],
  ])('%j → %s', (children, expected) => {
    expect(aggregateWorkflowState(children)).toBe(expected);
  });

  it('agrees with the table read rule by rule, for every list of up to three children', () => {
    // The aggregation table as written, one rule per line, as the oracle for the one-pass fold.
    const byRules = (children: readonly TaskState[]): WorkflowState => {
      const some = (state: TaskState) => children.includes(state);
      if (some('dead')) return 'dead';
      if (children.every((state) => state === 'succeeded')) return 'succeeded';
      if (children.every(isTerminalTaskState) && some('cancelled')) return 'cancelled';
      if (some('cancel_requested')) return 'cancel_requested';
      const started = some('leased') || some('awaiting_receipt') || some('awaiting_children');
      if (some('waiting') && !started && !some('queued')) return 'waiting';
      if (started) return 'running';
      if (some('succeeded') && children.some((state) => !isTerminalTaskState(state)))
        return 'running';
      return 'queued';
    };
    let lists: TaskState[][] = [[]];
    let checked = 0;
    for (let length = 1; length <= 3; length += 1) {
      lists = lists.flatMap((list) => taskStates.map((state) => [...list, state]));
      for (const children of lists) {
        expect(aggregateWorkflowState(children), children.join(',')).toBe(byRules(children));
        checked += 1;
      }
    }
    expect(checked).toBe(10 + 100 + 1_000);
  });

  it('refuses a workflow without tasks', () => {
    expect(() => aggregateWorkflowState([])).toThrow(RangeError);
  });
});
