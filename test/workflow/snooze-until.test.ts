import {
  type Actor,
  decideTaskEdge,
  defaultRetryPolicy,
  snooze,
  snoozeLimits,
} from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { taskSnapshot } from './task-snapshots';

/**
 * A snooze's `untilMs` is judged when the snooze is settled, against the decision's database
 * time (R11), not by `snooze()` on the worker's clock. Pure: the machine is given its `now`.
 */
const now = new Date('2026-03-01T10:00:00.000Z');
const worker: Actor = { kind: 'worker', name: 'host/41/boot1' };
const leased = taskSnapshot(now, { state: 'leased', attempt: 1, runAt: null });

function snoozeUntil(untilMs: number) {
  return decideTaskEdge({
    task: leased,
    policy: defaultRetryPolicy,
    event: { type: 'snooze', actor: worker, forMs: null, untilMs, reason: 'later' },
    now,
    random: () => 0.5,
  });
}

describe("a snooze's untilMs, at the decision's database time", () => {
  it('is taken within the past tolerance (run at once) and up to the limit ahead', () => {
    const { pastToleranceMs, maxMs } = snoozeLimits;
    for (const [untilMs, runAtMs] of [
      [now.getTime() - pastToleranceMs, now.getTime()],
      [now.getTime() + 60_000, now.getTime() + 60_000],
      [now.getTime() + maxMs, now.getTime() + maxMs],
    ] as const) {
      const decision = snoozeUntil(untilMs);
      expect(decision.ok && decision.edge).toMatchObject({ to: 'queued', reason: 'snoozed' });
      expect(decision.ok && decision.next.runAt?.getTime()).toBe(runAtMs);
    }
  });

  it('fails the attempt for good beyond the tolerance in the past or the limit ahead', () => {
    const { pastToleranceMs, maxMs } = snoozeLimits;
    for (const [untilMs, words] of [
      [now.getTime() - pastToleranceMs - 1, 'is in the past'],
      [now.getTime() + maxMs + 1, `is more than ${maxMs} ms after the database time`],
    ] as const) {
      const decision = snoozeUntil(untilMs);
      expect(decision.ok && decision.edge).toMatchObject({
        from: 'leased',
        to: 'dead',
        reason: 'non_retryable_error',
        errorCategory: 'invalid_argument',
      });
      expect(decision.ok && decision.edge.errorSummary).toContain(words);
      expect(decision.ok && decision.edge.errorSummary).toContain(now.toISOString());
    }
  });

  it('is not judged by snooze() on the clock of the process that calls it', () => {
    const untilMs = Date.now() - 10 * snoozeLimits.maxMs;
    expect(snooze({ untilMs, reason: 'later' })).toMatchObject({ untilMs, forMs: null });
  });
});
