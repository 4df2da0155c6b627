import { period } from '../format';
import { table } from '../table';

/** A rate limit (R51) as `causeway queues` asks for it. */
export interface RateLimitView {
  name: string;
  limit: number;
  periodMs: number;
  keys: number;
  spent: number;
  limitedKeys: number;
  busiest: {
    key: string | null;
    spent: number;
    nextSlotAt: string | null;
    pausedUntil: string | null;
    pausedByTask: string | null;
    pausedReason: string | null;
  }[];
}

/** How many of each limit's busiest keys the listing names. */
export const busiestRateKeysShown = 3;

export const rateLimitFields = `name limit periodMs keys spent limitedKeys
  busiest { key spent nextSlotAt pausedUntil pausedByTask pausedReason }`;

/** HH:MM:SS in UTC, as the engine's sentences write database times. */
function clockTime(at: string): string {
  return new Date(at).toISOString().slice(11, 19);
}

function keyText(key: RateLimitView['busiest'][number]): string {
  const name = key.key ?? '(one bucket)';
  if (key.pausedUntil !== null) {
    return (
      `${name} ${key.spent} (paused until ${clockTime(key.pausedUntil)}` +
      `${key.pausedByTask === null ? '' : ` by task ${key.pausedByTask}`}` +
      `${key.pausedReason === null ? '' : `: ${key.pausedReason}`})`
    );
  }
  return key.nextSlotAt === null
    ? `${name} ${key.spent}`
    : `${name} ${key.spent} (next slot ${clockTime(key.nextSlotAt)})`;
}

/**
 * The rate limits' table: each limit as `limit per period`, the cost spent within the period
 * over all its keys, how many keys no grant fits now, and its busiest keys with what each
 * spent and when it may spend again (times of day in UTC, database time).
 */
export function rateLimitTable(limits: readonly RateLimitView[]): string {
  if (limits.length === 0) return 'no rate limits';
  return table(
    ['RATE LIMIT', 'LIMIT/PERIOD', 'SPENT NOW', 'LIMITED KEYS', 'BUSIEST KEYS'],
    limits.map((limit) => [
      limit.name,
      `${limit.limit} per ${period(limit.periodMs)}`,
      String(limit.spent),
      String(limit.limitedKeys),
      limit.busiest.length === 0
        ? '-'
        : limit.busiest.map(keyText).join(', ') + (limit.keys > limit.busiest.length ? ', …' : ''),
    ]),
  );
}
