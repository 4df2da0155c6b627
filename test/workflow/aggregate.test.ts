import { aggregateWorkflowState, type TaskState, type WorkflowState } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';

describe('aggregateWorkflowState (SPEC §4, top to bottom)', () => {
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
  ])('%j → %s', (children, expected) => {
    expect(aggregateWorkflowState(children)).toBe(expected);
  });

  it('refuses a workflow without tasks', () => {
    expect(() => aggregateWorkflowState([])).toThrow(RangeError);
  });
});
