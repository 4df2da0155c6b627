import type { RateFacts } from './blocker-input';
import { rateHoldPhrase, rateHolds } from './blocker-rate';
import { clock } from './time-phrases';
import type { Transition } from './transition';

/** The rate limit a step of the workflow spends (R51), as its task stores it. */
export interface StepRateKey {
  readonly step: string;
  readonly name: string;
  /** Null: the name's one bucket. */
  readonly key: string | null;
}

/**
 * What a throttled retry did beyond its own task (R51): when its step spends a rate limit,
 * the wait the platform asked for paused the (name, key) for every task until then, from the
 * edge's time. "" for any other edge.
 */
export function ratePausePhrase(row: Transition, rates: readonly StepRateKey[]): string {
  const waitMs = row.detail?.retryAfterMs;
  if (row.errorCategory !== 'throttled' || typeof waitMs !== 'number') return '';
  const rate = rates.find((candidate) => candidate.step === row.step);
  if (rate === undefined) return '';
  const forKey = rate.key === null ? '' : ` for key ${JSON.stringify(rate.key)}`;
  const until = new Date(row.at.getTime() + waitMs);
  return `; rate limit ${rate.name}${forKey} paused for every task until ${clock(until)}`;
}

/**
 * The note `explain` adds for a due queued step whose rate limit's key is spent or paused
 * at `now` (R51), at that time: what holds it, as its `rate_limited` blocker says. Null when
 * its key has room. (An `ExplanationNote`; explain.ts imports this file, so not by name.)
 */
export function rateLimitedNote(
  step: string,
  facts: RateFacts,
  now: Date,
): { readonly at: Date; readonly step: string; readonly text: string } | null {
  if (!rateHolds(facts, now)) return null;
  return { at: now, step, text: `held: ${rateHoldPhrase(facts, now)}` };
}
