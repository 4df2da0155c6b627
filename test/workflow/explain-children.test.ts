/**
 * R48: `explain` says what a step waiting for its child workflows waits for, from the counts
 * the engine read: "publish-each: awaiting 12 child workflows of publish-to-platform: 8
 * succeeded, 3 running, 1 dead (tolerated 1 of 2)". Steps that are not waiting for children
 * get no such line, whatever counts are passed.
 */
import { explain } from '@causeway/workflow';
import type { StepChildrenCounts } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { transitionRows } from './transition-rows';

const row = transitionRows({ step: 'publish-each', actor: 'system' });

const started = [
  row({ step: null, taskId: null, to: 'queued', reason: 'submitted', actor: 'client' }),
  row({ to: 'pending', reason: 'submitted', actor: 'client' }),
  row({ step: null, taskId: null, from: 'queued', to: 'running', reason: 'children_started' }),
  row({
    from: 'pending',
    to: 'awaiting_children',
    reason: 'children_started',
    detail: { children: 12 },
  }),
];

const twelve: StepChildrenCounts = {
  step: 'publish-each',
  workflows: ['publish-to-platform'],
  total: 12,
  byState: { succeeded: 8, running: 3, dead: 1 },
  failed: 1,
  allowedFailures: 2,
};

describe('explain with child counts', () => {
  it('says the sentence of R48 for a step awaiting its children, before the summary', () => {
    const explanation = explain(started, [], [twelve]);
    const line =
      'publish-each: awaiting 12 child workflows of publish-to-platform: 8 succeeded, 3 running, 1 dead (tolerated 1 of 2)';
    expect(explanation.children).toEqual([line]);
    const text = explanation.text.split('\n');
    expect(text.at(-2)).toBe(line);
    expect(text.at(-1)).toBe('workflow running: publish-each awaiting_children');
  });

  it('says a cancel is waiting for the children while they stop', () => {
    const rows = [
      ...started,
      row({
        from: 'awaiting_children',
        to: 'cancel_requested',
        reason: 'cancel_requested',
        actor: 'operator:alice',
      }),
    ];
    const counts = { ...twelve, byState: { succeeded: 8, cancel_requested: 4 }, failed: 0 };
    expect(explain(rows, [], [counts]).children).toEqual([
      'publish-each: cancel requested, waiting for 12 child workflows of publish-to-platform: 8 succeeded, 4 cancel requested (tolerated 0 of 2)',
    ]);
  });

  it('names no tolerance when the step fails fast, and every state it counts', () => {
    const counts: StepChildrenCounts = {
      step: 'publish-each',
      workflows: ['a', 'b'],
      total: 7,
      byState: { queued: 1, waiting: 2, running: 0, cancelled: 1, succeeded: 3 },
      failed: 0,
      allowedFailures: 0,
    };
    expect(explain(started, [], [counts]).children).toEqual([
      'publish-each: awaiting 7 child workflows of a, b: 3 succeeded, 1 queued, 2 waiting, 1 cancelled',
    ]);
  });

  it('gives no line for a step that no longer waits, nor for counts of a step not in the log', () => {
    const settled = [
      ...started,
      row({
        from: 'awaiting_children',
        to: 'succeeded',
        reason: 'children_succeeded',
        detail: { total: 12, succeeded: 12 },
      }),
    ];
    const done = { ...twelve, byState: { succeeded: 12 }, failed: 0 };
    expect(explain(settled, [], [done]).children).toEqual([]);
    expect(explain(started, [], [{ ...twelve, step: 'elsewhere' }]).children).toEqual([]);
    expect(explain(started).children).toEqual([]);
    expect(explain(settled, [], [done]).text).not.toContain('awaiting 12');
  });

  it('says one child workflow in the singular', () => {
    const one = { ...twelve, total: 1, byState: { running: 1 }, failed: 0, allowedFailures: 0 };
    expect(explain(started, [], [one]).children).toEqual([
      'publish-each: awaiting 1 child workflow of publish-to-platform: 1 running',
    ]);
  });
});
