/**
 * Plain properties of the retry policy (R18): exponential backoff with full jitter, capped,
 * and never earlier than a platform's Retry-After.
 */
import { type BackoffPolicy, backoffDelayMs, nextRunAt } from '@causeway/workflow/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anyBackoffArbitrary, jitterArbitrary, propertyParameters } from './arbitraries';

/** R18 written out: min(cap, initial × coefficient^(attempt − 1)). */
function ceilingOf(attempt: number, backoff: BackoffPolicy): number {
  return Math.min(
    backoff.maximumIntervalMs,
    backoff.initialIntervalMs * backoff.backoffCoefficient ** (attempt - 1),
  );
}

const attemptArbitrary = fc.integer({ min: 1, max: 60 });
const baseTime = Date.UTC(2030, 0, 1, 9, 0, 0);
const nowArbitrary = fc.integer({ min: 0, max: 365 * 24 * 3_600_000 }).map((ms) => baseTime + ms);

describe('backoffDelayMs', () => {
  it('is a whole number of milliseconds in [0, min(cap, initial × coefficient^(attempt − 1))]', () => {
    fc.assert(
      fc.property(attemptArbitrary, anyBackoffArbitrary, jitterArbitrary, (attempt, backoff, r) => {
        const delay = backoffDelayMs(attempt, backoff, () => r);
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(ceilingOf(attempt, backoff));
      }),
      propertyParameters(),
    );
  });

  it('is deterministic for the same random value', () => {
    fc.assert(
      fc.property(attemptArbitrary, anyBackoffArbitrary, jitterArbitrary, (attempt, backoff, r) => {
        expect(backoffDelayMs(attempt, backoff, () => r)).toBe(
          backoffDelayMs(attempt, backoff, () => r),
        );
      }),
      propertyParameters(),
    );
  });

  it('full jitter covers the window: the delay is random × ceiling, rounded down', () => {
    fc.assert(
      fc.property(attemptArbitrary, anyBackoffArbitrary, jitterArbitrary, (attempt, backoff, r) => {
        const ceiling = ceilingOf(attempt, backoff);
        const delay = backoffDelayMs(attempt, backoff, () => r);
        // Within one millisecond of r × ceiling: every part of [0, ceiling) is reachable.
        expect(delay).toBeLessThanOrEqual(r * ceiling);
        expect(delay).toBeGreaterThan(r * ceiling - 1);
      }),
      propertyParameters(),
    );
  });

  it('random → 0 gives no delay and random → 1 approaches the ceiling', () => {
    fc.assert(
      fc.property(attemptArbitrary, anyBackoffArbitrary, (attempt, backoff) => {
        const ceiling = ceilingOf(attempt, backoff);
        const almostOne = 1 - Number.EPSILON / 2; // the largest double below 1
        expect(backoffDelayMs(attempt, backoff, () => 0)).toBe(0);
        expect(backoffDelayMs(attempt, backoff, () => almostOne)).toBeGreaterThanOrEqual(
          Math.max(0, Math.ceil(ceiling) - 1),
        );
      }),
      propertyParameters(),
    );
  });

  it('grows with the random value and with the attempt (the ceiling never shrinks)', () => {
    fc.assert(
      fc.property(
        attemptArbitrary,
        anyBackoffArbitrary,
        jitterArbitrary,
        jitterArbitrary,
        (attempt, backoff, a, b) => {
          const [low, high] = a <= b ? [a, b] : [b, a];
          expect(backoffDelayMs(attempt, backoff, () => low)).toBeLessThanOrEqual(
            backoffDelayMs(attempt, backoff, () => high),
          );
          expect(backoffDelayMs(attempt, backoff, () => low)).toBeLessThanOrEqual(
            backoffDelayMs(attempt + 1, backoff, () => low),
          );
        },
      ),
      propertyParameters(),
    );
  });

  it('refuses a random value outside [0, 1) instead of producing a bogus delay', () => {
    const outside = fc.oneof(
      fc.double({ min: 1, max: 10, noNaN: true }),
      fc.double({ min: -10, max: -Number.MIN_VALUE, noNaN: true }),
      fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY),
    );
    fc.assert(
      fc.property(attemptArbitrary, anyBackoffArbitrary, outside, (attempt, backoff, r) => {
        expect(() => backoffDelayMs(attempt, backoff, () => r)).toThrow(RangeError);
      }),
      propertyParameters(),
    );
  });
});

describe('nextRunAt', () => {
  it('is never before now + Retry-After, and never after now + Retry-After + ceiling', () => {
    fc.assert(
      fc.property(
        attemptArbitrary,
        anyBackoffArbitrary,
        nowArbitrary,
        jitterArbitrary,
        fc.integer({ min: 0, max: 24 * 3_600_000 }),
        (attempt, backoff, nowMs, r, retryAfterMs) => {
          const at = nextRunAt(attempt, backoff, new Date(nowMs), () => r, retryAfterMs).getTime();
          expect(at).toBeGreaterThanOrEqual(nowMs + retryAfterMs);
          expect(at).toBeLessThanOrEqual(nowMs + retryAfterMs + ceilingOf(attempt, backoff));
          // The jitter goes on top of Retry-After, so a storm told the same Retry-After spreads.
          expect(at).toBe(nowMs + retryAfterMs + backoffDelayMs(attempt, backoff, () => r));
        },
      ),
      propertyParameters(),
    );
  });

  it('does not touch the Date it was given', () => {
    fc.assert(
      fc.property(
        attemptArbitrary,
        anyBackoffArbitrary,
        nowArbitrary,
        jitterArbitrary,
        (attempt, backoff, nowMs, r) => {
          const now = new Date(nowMs);
          nextRunAt(attempt, backoff, now, () => r);
          expect(now.getTime()).toBe(nowMs);
        },
      ),
      propertyParameters(),
    );
  });
});
