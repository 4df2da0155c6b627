import {
  blockerCodeMeanings,
  decideBlocker,
  type RateFacts,
  rateLimitedNote,
} from '@causeway/workflow/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyParameters, timeoutForRuns } from './arbitraries';
import { at, input, now, task } from './blocker-facts';

/**
 * The `rate_limited` decision over arbitrary windows and pauses (R51): a due queued task is
 * held exactly when its key's pause or next slot is later than now, until the later of the
 * two that are; otherwise its rate limit is no blocker. The facts are the documented ones,
 * JSON-ready, and the sentence has no holes; explain's note says the same.
 */
const minute = 60_000;
const time = fc.integer({ min: -5 * minute, max: 5 * minute }).map(at);
/** Due: now or earlier. */
const dueAt = fc.integer({ min: -5 * minute, max: 0 }).map(at);
const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: null });

const rateFacts: fc.Arbitrary<RateFacts> = fc
  .record({
    name: fc.constantFrom('platform', 'mail'),
    key: maybe(fc.stringMatching(/^[a-z0-9-]{1,8}$/)),
    cost: fc.integer({ min: 1, max: 5 }),
    declared: maybe(
      fc.record({
        limit: fc.integer({ min: 5, max: 100 }),
        periodMs: fc.constantFrom(1_000, minute, 3_600_000),
        spent: fc.integer({ min: 0, max: 100 }),
      }),
    ),
    nextSlotAt: maybe(time),
    pause: maybe(
      fc.record({
        until: time,
        byTask: maybe(fc.uuid()),
        byWorkflow: maybe(fc.uuid()),
        reason: maybe(fc.constantFrom('HTTP 429 from the platform', 'too busy')),
      }),
    ),
  })
  .map(({ declared, ...facts }) => ({
    ...facts,
    limit: declared?.limit ?? null,
    periodMs: declared?.periodMs ?? null,
    spent: declared?.spent ?? null,
  }));

const laterThanNow = (at: Date | null): Date | null => (at !== null && at > now ? at : null);

describe('rate_limited over arbitrary windows (R51)', () => {
  it(
    'holds a due task exactly while its key is paused or has no room, until the later of the two',
    () => {
      fc.assert(
        fc.property(rateFacts, dueAt, (rate, due) => {
          const drawn = input({ task: task('queued', { snapshot: { runAt: due } }), rate });
          const blocker = decideBlocker(drawn);
          const pausedUntil = laterThanNow(rate.pause?.until ?? null);
          const slot = laterThanNow(rate.nextSlotAt);
          const note = rateLimitedNote('publish', rate, now);
          if (pausedUntil === null && slot === null) {
            expect(blocker?.code).toBe('claimable');
            expect(note).toBeNull();
            return;
          }
          expect(blocker?.code).toBe('rate_limited');
          const until =
            pausedUntil === null || (slot !== null && slot > pausedUntil) ? slot : pausedUntil;
          expect(blocker?.until).toEqual(until);
          expect(blocker?.message).not.toMatch(/undefined|NaN|Invalid Date|\[object|\?/);
          expect(blocker?.message).toContain(
            pausedUntil === null
              ? 'is spent'
              : `is paused until ${pausedUntil.toISOString().slice(11, 19)}`,
          );
          const documented = Object.keys(blockerCodeMeanings.rate_limited.facts);
          expect(Object.keys(blocker?.facts ?? {}).sort()).toEqual([...documented].sort());
          expect(JSON.parse(JSON.stringify(blocker?.facts))).toEqual(blocker?.facts);
          expect(note?.text).toBe(`held: ${blocker?.message.split(', but ')[1]}`);
        }),
        propertyParameters(),
      );
    },
    timeoutForRuns(1),
  );
});
