import { decideBlocker, type RateFacts } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { at, input, task } from './blocker-facts';

/**
 * The `rate_limited` blocker (R51), case by case: a spent key names its limit, what the last
 * period spent and the next slot; a paused key names the task that paused it, its workflow
 * and why; a key with room is no blocker; a paused queue, a time not yet due and a full
 * concurrency key come first.
 */
const spent: RateFacts = {
  name: 'platform',
  key: 'acme',
  cost: 1,
  limit: 100,
  periodMs: 60_000,
  spent: 100,
  nextSlotAt: at(67_000),
  pause: null,
};

const due = (rate: RateFacts, overrides: Parameters<typeof input>[0] = {}) =>
  input({ task: task('queued', { snapshot: { runAt: at(-30_000) } }), rate, ...overrides });

describe('rate_limited', () => {
  it('a spent key: its limit, what the last period spent, and the next slot', () => {
    expect(decideBlocker(due(spent))).toEqual({
      taskId: 't1',
      step: 'publish',
      code: 'rate_limited',
      message:
        'publish: due since 11:59:30, but rate limit platform (100 per 1 min) for key "acme" is spent: 100 in the last 1 min; next slot 12:01:07',
      until: at(67_000),
      facts: {
        name: 'platform',
        key: 'acme',
        cost: 1,
        limit: 100,
        periodMs: 60_000,
        spent: 100,
        nextSlotAt: '2026-05-04T12:01:07.000Z',
        pausedUntil: null,
        pausedByTask: null,
        pausedByWorkflow: null,
        pausedReason: null,
        runAt: '2026-05-04T11:59:30.000Z',
      },
    });
  });

  it("the name's one bucket, a cost over what is left, and a limit this process does not declare", () => {
    const bucket = { ...spent, key: null, cost: 2, spent: 99 };
    expect(decideBlocker(due(bucket))?.message).toBe(
      'publish: due since 11:59:30, but rate limit platform (100 per 1 min) is spent: 99 in the last 1 min, and it costs 2; next slot 12:01:07',
    );
    const undeclared = { ...spent, limit: null, periodMs: null, spent: null };
    const blocker = decideBlocker(due(undeclared));
    expect(blocker?.message).toBe(
      'publish: due since 11:59:30, but rate limit platform for key "acme" is spent; next slot 12:01:07 (as the last claim of the key left it: this process does not declare the limit)',
    );
    expect(blocker?.facts).toMatchObject({ limit: null, periodMs: null, spent: null });
  });

  it('a paused key: until when, by which task of which workflow, and why', () => {
    const pause = {
      until: at(30_000),
      byTask: 'task-9',
      byWorkflow: 'wf-9',
      reason: 'HTTP 429 from the platform',
    };
    const blocker = decideBlocker(due({ ...spent, spent: 1, nextSlotAt: null, pause }));
    expect(blocker?.code).toBe('rate_limited');
    expect(blocker?.message).toBe(
      'publish: due since 11:59:30, but rate limit platform for key "acme" is paused until 12:00:30 by task task-9 of workflow wf-9: HTTP 429 from the platform',
    );
    expect(blocker?.until).toEqual(at(30_000));
    expect(blocker?.facts).toMatchObject({
      spent: 1,
      nextSlotAt: null,
      pausedUntil: '2026-05-04T12:00:30.000Z',
      pausedByTask: 'task-9',
      pausedByWorkflow: 'wf-9',
      pausedReason: 'HTTP 429 from the platform',
    });
    // Spent beyond the pause too: it says so, and its until is the later of the two.
    const both = decideBlocker(due({ ...spent, pause: { ...pause, byWorkflow: null } }));
    expect(both?.message).toBe(
      'publish: due since 11:59:30, but rate limit platform for key "acme" is paused until 12:00:30 by task task-9: HTTP 429 from the platform; then its next slot is 12:01:07',
    );
    expect(both?.until).toEqual(at(67_000));
  });

  it('a key with room, or a pause that has passed, is no blocker of its own', () => {
    const room = { ...spent, spent: 99, nextSlotAt: null };
    expect(decideBlocker(due(room))?.code).toBe('claimable');
    const passed = {
      ...room,
      nextSlotAt: at(-1),
      pause: { until: at(0), byTask: 'task-9', byWorkflow: 'wf-9', reason: 'HTTP 429' },
    };
    expect(decideBlocker(due(passed))?.code).toBe('claimable');
  });

  it('a paused queue, a time not yet due and a full concurrency key come first', () => {
    const pausedQueue = due(spent, {
      queue: { paused: { operator: 'ops', reason: 'maintenance', pausedAt: at(-5_000) } },
    });
    expect(decideBlocker(pausedQueue)?.code).toBe('queue_paused');
    const later = input({ task: task('queued', { snapshot: { runAt: at(5_000) } }), rate: spent });
    expect(decideBlocker(later)?.code).toBe('not_due');
    const holder = {
      taskId: 't2',
      workflowId: 'wf2',
      step: 'publish',
      state: 'leased' as const,
      holder: 'w1',
      since: at(-10_000),
    };
    const full = due(spent, {
      concurrency: { group: 'note/publish', key: 'acme', limit: 1, holders: [holder] },
    });
    expect(decideBlocker(full)?.code).toBe('concurrency_limited');
    const free = due(spent, {
      concurrency: { group: 'note/publish', key: 'acme', limit: 2, holders: [holder] },
    });
    expect(decideBlocker(free)?.code).toBe('rate_limited');
  });
});
