import type { Blocker } from './blocker-codes';
import { type BlockerInput, blockerOf, isoOf, type RateFacts } from './blocker-input';
import { duration, moment } from './time-phrases';

/**
 * Whether a due `queued` task's rate limit holds it (R51): its (name, key) is paused by a
 * step that heard "too busy", or a grant of its cost does not fit the window now. A key with
 * room is not a blocker of its own: the task is as claimable as any other.
 */
export function rateHolds(facts: RateFacts, now: Date): boolean {
  return later(facts.pause?.until ?? null, now) || later(facts.nextSlotAt, now);
}

/**
 * A due `queued` task whose rate limit's key is paused or spent (R51): no claim grants it
 * until the pause ends and its cost fits the window, whichever comes later.
 */
export function rateBlocker(input: BlockerInput, facts: RateFacts, dueSince: Date): Blocker {
  const { now } = input;
  const pause = facts.pause !== null && later(facts.pause.until, now) ? facts.pause : null;
  const slot = later(facts.nextSlotAt, now) ? facts.nextSlotAt : null;
  const until = pause === null ? slot : latest(pause.until, slot);
  return blockerOf(
    input,
    'rate_limited',
    `due since ${moment(dueSince, now)}, but ${rateHoldPhrase(facts, now)}`,
    until,
    {
      name: facts.name,
      key: facts.key,
      cost: facts.cost,
      limit: facts.limit,
      periodMs: facts.periodMs,
      spent: facts.spent,
      nextSlotAt: isoOf(facts.nextSlotAt),
      pausedUntil: isoOf(facts.pause?.until ?? null),
      pausedByTask: facts.pause?.byTask ?? null,
      pausedByWorkflow: facts.pause?.byWorkflow ?? null,
      pausedReason: facts.pause?.reason ?? null,
      runAt: isoOf(dueSince),
    },
  );
}

/**
 * What holds a task of a rate limit's key at `now` (the blocker's sentence and `explain`'s
 * note share it): 'rate limit platform for key "acme" is paused until 10:02:07 by task … of
 * workflow …: HTTP 429 from the platform', or 'rate limit platform (100 per 1 min) for key
 * "acme" is spent: 100 in the last 1 min; next slot 10:02:07'.
 */
export function rateHoldPhrase(facts: RateFacts, now: Date): string {
  const pause = facts.pause !== null && later(facts.pause.until, now) ? facts.pause : null;
  const slot = later(facts.nextSlotAt, now) ? facts.nextSlotAt : null;
  const forKey = facts.key === null ? '' : ` for key ${JSON.stringify(facts.key)}`;
  const next = `next slot ${slot === null ? 'now' : moment(slot, now)}`;
  if (pause !== null) {
    const by =
      pause.byTask === null
        ? ''
        : ` by task ${pause.byTask}${pause.byWorkflow === null ? '' : ` of workflow ${pause.byWorkflow}`}`;
    const reason = pause.reason === null ? '' : `: ${pause.reason}`;
    const after =
      slot !== null && slot.getTime() > pause.until.getTime()
        ? `; then its next slot is ${moment(slot, now)}`
        : '';
    return `rate limit ${facts.name}${forKey} is paused until ${moment(pause.until, now)}${by}${reason}${after}`;
  }
  if (facts.limit !== null && facts.periodMs !== null) {
    const period = duration(facts.periodMs);
    const cost = facts.cost === 1 ? '' : `, and it costs ${facts.cost}`;
    return `rate limit ${facts.name} (${facts.limit} per ${period})${forKey} is spent: ${facts.spent ?? '?'} in the last ${period}${cost}; ${next}`;
  }
  return `rate limit ${facts.name}${forKey} is spent; ${next} (as the last claim of the key left it: this process does not declare the limit)`;
}

function later(at: Date | null, now: Date): boolean {
  return at !== null && at.getTime() > now.getTime();
}

function latest(a: Date, b: Date | null): Date {
  return b === null || a.getTime() >= b.getTime() ? a : b;
}
