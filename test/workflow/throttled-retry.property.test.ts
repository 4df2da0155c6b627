/**
 * R51: a step that hears "too busy" throws `StepError('throttled', message, { retryAfterMs })`
 * and its retry is scheduled at exactly now + retryAfterMs, instead of the backoff. Other
 * categories keep the backoff with the asked wait as its floor. The StepError constructor
 * refuses a wait that is not an integer from 1 ms to 24 h (`invalid_retry_after`).
 */
import {
  classifyError,
  decideBlocker,
  decideTaskEdge,
  defaultRetryPolicy,
  type ErrorCategory,
  explain,
  nextRunAt,
  retryAfterLimits,
  retryRunAt,
  StepError,
  type Transition,
} from '@causeway/workflow/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  anyBackoffArbitrary,
  errorCategoryArbitrary,
  jitterArbitrary,
  propertyParameters,
} from './arbitraries';
import { at, edge, input, task } from './blocker-facts';
import { taskSnapshot } from './task-snapshots';

const baseTime = Date.UTC(2030, 0, 1, 9, 0, 0);
const nowArbitrary = fc.integer({ min: 0, max: 365 * 24 * 3_600_000 }).map((ms) => baseTime + ms);
const retryAfterArbitrary = fc.integer({
  min: retryAfterLimits.minMs,
  max: retryAfterLimits.maxMs,
});
const attemptArbitrary = fc.integer({ min: 1, max: 60 });
const retryableCategories = errorCategoryArbitrary.filter(
  (category) => !['invalid_argument', 'not_found', 'unauthorized', 'conflict'].includes(category),
);

/** The machine's decision for a leased task (attempt `attempt` of many) that failed. */
function failed(
  attempt: number,
  nowMs: number,
  jitter: number,
  category: ErrorCategory,
  retryAfterMs: number | undefined,
) {
  const now = new Date(nowMs);
  const decision = decideTaskEdge({
    task: taskSnapshot(now, { state: 'leased', attempt }),
    policy: { ...defaultRetryPolicy, maxAttempts: 1_000 },
    event: {
      type: 'fail',
      actor: { kind: 'worker', name: 'host/1/boot' },
      category,
      summary: 'too busy',
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    },
    now,
    random: () => jitter,
  });
  if (!decision.ok) throw new Error(`refused: ${decision.refusal.message}`);
  return decision;
}

describe('a throttled retry (R51)', () => {
  it('is scheduled at exactly now + retryAfterMs, whatever the attempt, backoff or jitter', () => {
    fc.assert(
      fc.property(
        attemptArbitrary,
        nowArbitrary,
        jitterArbitrary,
        retryAfterArbitrary,
        (attempt, nowMs, jitter, retryAfterMs) => {
          const { edge, next } = failed(attempt, nowMs, jitter, 'throttled', retryAfterMs);
          expect(edge).toMatchObject({ to: 'queued', reason: 'retry_scheduled' });
          expect(next.runAt?.getTime()).toBe(nowMs + retryAfterMs);
          // The log row says why it waits.
          expect(edge.errorCategory).toBe('throttled');
          expect(edge.detail).toEqual({
            runAt: new Date(nowMs + retryAfterMs).toISOString(),
            retryAfterMs,
          });
        },
      ),
      propertyParameters(),
    );
  });

  it('retryRunAt: throttled with a wait is now + wait; every other case is nextRunAt', () => {
    fc.assert(
      fc.property(
        attemptArbitrary,
        anyBackoffArbitrary,
        nowArbitrary,
        jitterArbitrary,
        errorCategoryArbitrary,
        fc.option(retryAfterArbitrary, { nil: undefined }),
        (attempt, backoff, nowMs, r, category, retryAfterMs) => {
          const now = new Date(nowMs);
          const at = retryRunAt(attempt, backoff, now, () => r, category, retryAfterMs);
          if (category === 'throttled' && retryAfterMs !== undefined) {
            expect(at.getTime()).toBe(nowMs + retryAfterMs);
          } else {
            expect(at.getTime()).toBe(
              nextRunAt(attempt, backoff, now, () => r, retryAfterMs ?? 0).getTime(),
            );
          }
        },
      ),
      propertyParameters(),
    );
  });

  it('any other retryable category waits at least retryAfterMs, with the backoff on top', () => {
    fc.assert(
      fc.property(
        attemptArbitrary,
        nowArbitrary,
        jitterArbitrary,
        retryableCategories.filter((category) => category !== 'throttled'),
        retryAfterArbitrary,
        (attempt, nowMs, jitter, category, retryAfterMs) => {
          const { edge, next } = failed(attempt, nowMs, jitter, category, retryAfterMs);
          const backoff = defaultRetryPolicy.backoff;
          const ceiling = Math.min(
            backoff.maximumIntervalMs,
            backoff.initialIntervalMs * backoff.backoffCoefficient ** (attempt - 1),
          );
          const at = next.runAt?.getTime() ?? Number.NaN;
          expect(at).toBe(nowMs + retryAfterMs + Math.floor(jitter * ceiling));
          expect(edge.detail?.retryAfterMs).toBe(retryAfterMs);
        },
      ),
      propertyParameters(),
    );
  });

  it('without retryAfterMs keeps the plain backoff and says nothing of a wait', () => {
    const { edge, next } = failed(1, baseTime, 0.5, 'throttled', undefined);
    expect(next.runAt?.getTime()).toBe(baseTime + 500);
    expect(edge.detail).toEqual({ runAt: new Date(baseTime + 500).toISOString() });
  });
});

describe('StepError retryAfterMs', () => {
  it('accepts every integer from 1 ms to 24 h and hands it to the classifier', () => {
    fc.assert(
      fc.property(errorCategoryArbitrary, retryAfterArbitrary, (category, retryAfterMs) => {
        const error = new StepError(category, 'too busy', { retryAfterMs });
        expect(classifyError(error)).toEqual({ category, summary: 'too busy', retryAfterMs });
      }),
      propertyParameters(),
    );
  });

  it.each([0, -1, 1.5, 86_400_001, Number.NaN, Number.POSITIVE_INFINITY, '1000'])(
    'refuses %o with a TypeError coded invalid_retry_after',
    (retryAfterMs) => {
      const make = () =>
        new StepError('throttled', 'too busy', { retryAfterMs: retryAfterMs as number });
      expect(make).toThrow(TypeError);
      expect(make).toThrow(/^invalid_retry_after: StepError retryAfterMs must be an integer/);
      expect(make).toThrow(`got ${String(retryAfterMs)}`);
    },
  );
});

describe('explain of a throttled retry', () => {
  const row = (detail: Record<string, unknown>, category: ErrorCategory): Transition => ({
    id: '2',
    workflowId: 'w1',
    taskId: 't1',
    step: 'publish',
    from: 'leased',
    to: 'queued',
    reason: 'retry_scheduled',
    errorCategory: category,
    errorSummary: 'platform /posts: 429',
    actor: 'worker:host/1/boot',
    attempt: 1,
    at: new Date('2030-01-01T10:00:00.000Z'),
    detail,
  });

  it('says when and why it waits: "retry at <time>: throttled, the step asked to wait N s"', () => {
    const text = explain([
      row({ runAt: '2030-01-01T10:00:30.000Z', retryAfterMs: 30_000 }, 'throttled'),
    ]).lines.join('\n');
    expect(text).toBe(
      '10:00:00 publish: failed (throttled: platform /posts: 429), retry at 10:00:30: throttled, the step asked to wait 30 s',
    );
  });

  it('tells a wait that was a floor under the backoff apart from the throttled one', () => {
    const text = explain([
      row({ runAt: '2030-01-01T10:00:01.500Z', retryAfterMs: 1_000 }, 'unavailable'),
    ]).lines.join('\n');
    expect(text).toBe(
      '10:00:00 publish: failed (unavailable: platform /posts: 429), retry at 10:00:01: the step asked to wait at least 1 s, the backoff on top',
    );
  });
});

describe('the blocker of a task waiting for its retry (R51)', () => {
  const waitingAfter = (category: ErrorCategory, retryAfterMs: number) =>
    decideBlocker(
      input({
        task: task('queued', {
          snapshot: { runAt: at(30_000), attempt: 1 },
          lastEdge: edge('retry_scheduled', {
            from: 'leased',
            errorCategory: category,
            errorSummary: 'too busy',
            detail: { runAt: at(30_000).toISOString(), retryAfterMs },
          }),
        }),
      }),
    );

  it('a throttled one is due when the step asked, with no backoff', () => {
    const blocker = waitingAfter('throttled', 30_000);
    expect(blocker?.message).toBe(
      'publish: queued, due 12:00:30 (in 30 s): retry when the step asked, 30 s after attempt 1 of 3 failed (throttled: too busy)',
    );
    expect(blocker?.facts).toMatchObject({ cause: 'backoff', retryAfterMs: 30_000 });
  });

  it('any other category waits for the backoff on top of the asked wait', () => {
    const blocker = waitingAfter('unavailable', 20_000);
    expect(blocker?.message).toBe(
      'publish: queued, due 12:00:30 (in 30 s): retry backoff after attempt 1 of 3 failed (unavailable: too busy), on top of the 20 s the step asked to wait',
    );
    expect(blocker?.facts).toMatchObject({ cause: 'backoff', retryAfterMs: 20_000 });
  });
});
