import { explain, type RateFacts, rateLimitedNote } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { at, edge } from './blocker-facts';

/**
 * `explain` on rate limits (R51): a throttled retry of a step that spends a rate limit says it
 * paused the key for every task until the wait passes; a due queued step whose key is spent
 * or paused gets a note of what holds it, in its blocker's words.
 */
const throttledRetry = edge('retry_scheduled', {
  from: 'leased',
  errorCategory: 'throttled',
  errorSummary: 'HTTP 429 from the platform',
  attempt: 1,
  at: at(0),
  detail: { runAt: at(30_000).toISOString(), retryAfterMs: 30_000 },
});

describe('explain on rate limits (R51)', () => {
  it('a throttled retry of a rate-limited step paused its key for everyone until the wait passed', () => {
    const rates = [{ step: 'publish', name: 'platform', key: 'acme' }];
    expect(explain([throttledRetry], [], [], [], rates).lines).toEqual([
      '12:00:00 publish: failed (throttled: HTTP 429 from the platform), retry at 12:00:30: throttled, the step asked to wait 30 s; rate limit platform for key "acme" paused for every task until 12:00:30',
    ]);
    // The name's one bucket, and a step that spends no rate limit (only its own retry waits).
    const bucket = [{ step: 'publish', name: 'platform', key: null }];
    expect(explain([throttledRetry], [], [], [], bucket).lines[0]).toMatch(
      /; rate limit platform paused for every task until 12:00:30$/,
    );
    const other = [{ step: 'render', name: 'platform', key: 'acme' }];
    expect(explain([throttledRetry], [], [], [], other).lines[0]).toMatch(/asked to wait 30 s$/);
    // Any other failure does not pause a key, whatever wait it asked for.
    const unavailable = { ...throttledRetry, errorCategory: 'unavailable' as const };
    expect(explain([unavailable], [], [], [], rates).lines[0]).toMatch(/the backoff on top$/);
  });

  it('a due queued step held by its rate limit gets a note in its blocker’s words', () => {
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
    const note = rateLimitedNote('publish', spent, at(0));
    expect(note).toEqual({
      at: at(0),
      step: 'publish',
      text: 'held: rate limit platform (100 per 1 min) for key "acme" is spent: 100 in the last 1 min; next slot 12:01:07',
    });
    const queued = edge('submitted', { at: at(-10_000) });
    expect(explain([queued], note === null ? [] : [note]).lines).toEqual([
      '11:59:50 publish: accepted and queued',
      '12:00:00 publish: held: rate limit platform (100 per 1 min) for key "acme" is spent: 100 in the last 1 min; next slot 12:01:07',
    ]);
    expect(rateLimitedNote('publish', { ...spent, spent: 99, nextSlotAt: null }, at(0))).toBeNull();
  });
});
