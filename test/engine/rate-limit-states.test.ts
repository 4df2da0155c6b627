/**
 * R51 where an operator looks: `engine.rateLimits()` lists each declared limit in declaration
 * order with its spend within the period on the database clock, its spent or paused keys and
 * the busiest of them (most spent, then paused), each key's next slot and pause with who and
 * why; the period moving on empties it; bad input is refused with invalid_request.
 */
import { EngineError } from '@causeway/engine';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { fillRateLimits, rateLimits, rateWorkflows } from '../helpers/rate-limited';

const database = useTestDatabase();
const url = () => database().url;
const engine = () => testEngine(url(), { workflows: rateWorkflows, rateLimits });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

afterEach(() => setDatabaseClockOffset(url(), 0));

const databaseNow = async () =>
  new Date(
    (await query<{ now: string }>(url(), 'select causeway_now()::text as now'))[0]?.now as string,
  );

describe('engine.rateLimits (R51)', () => {
  it('shows each limit’s spend, limited keys and busiest keys with their next slot and pause', async () => {
    const cw = engine();
    try {
      expect(await cw.rateLimits()).toEqual([
        {
          name: 'posts',
          limit: 3,
          periodMs: 60_000,
          keys: 0,
          spent: 0,
          limitedKeys: 0,
          busiest: [],
        },
        {
          name: 'exports',
          limit: 100,
          periodMs: 3_600_000,
          keys: 0,
          spent: 0,
          limitedKeys: 0,
          busiest: [],
        },
      ]);
      const { pausedTask, pausedWorkflow } = await fillRateLimits(cw, url());
      const [grant] = await query<{ at: string }>(
        url(),
        `select spent_at[1]::text as at from causeway_rate_windows
         where name = 'posts' and key = 'acme'`,
      );
      const now = await databaseNow();
      const [posts, exports] = await cw.rateLimits();
      expect(exports).toMatchObject({ name: 'exports', keys: 0, spent: 0, busiest: [] });
      // acme 3 (spent to the limit) + bolt 1 + zed 1 (its claim spent before the 429).
      expect(posts).toMatchObject({ name: 'posts', keys: 3, spent: 5, limitedKeys: 2 });
      const [acme, zed, bolt] = posts?.busiest ?? [];
      expect(posts?.busiest.map((key) => key.key)).toEqual(['acme', 'zed', 'bolt']);
      expect(acme).toEqual({
        key: 'acme',
        spent: 3,
        nextSlotAt: new Date(new Date(grant?.at as string).getTime() + 60_000),
        pausedUntil: null,
        pausedByTask: null,
        pausedByWorkflow: null,
        pausedReason: null,
      });
      expect(bolt).toMatchObject({ key: 'bolt', spent: 1, nextSlotAt: null, pausedUntil: null });
      expect(zed).toMatchObject({
        key: 'zed',
        spent: 1,
        nextSlotAt: null,
        pausedByTask: pausedTask,
        pausedByWorkflow: pausedWorkflow,
        pausedReason: 'HTTP 429',
      });
      const pauseLeft = (zed?.pausedUntil?.getTime() ?? 0) - now.getTime();
      expect(pauseLeft).toBeGreaterThan(25_000);
      expect(pauseLeft).toBeLessThanOrEqual(30_000);

      // Bounded per limit; the totals still count every key.
      const [one] = await cw.rateLimits({ keysPerLimit: 1 });
      expect(one).toMatchObject({ keys: 3, spent: 5, limitedKeys: 2 });
      expect(one?.busiest.map((key) => key.key)).toEqual(['acme']);
      expect((await cw.rateLimits({ name: 'exports' })).map((limit) => limit.name)).toEqual([
        'exports',
      ]);
      expect(await cw.rateLimits({ name: 'nothing-declared' })).toEqual([]);

      // Thirty seconds on, database time: the pause is over, the grants still count.
      await setDatabaseClockOffset(url(), 31_000);
      const [later] = await cw.rateLimits();
      expect(later).toMatchObject({ keys: 3, spent: 5, limitedKeys: 1 });
      expect(later?.busiest.find((key) => key.key === 'zed')).toMatchObject({
        pausedUntil: null,
        pausedByTask: null,
        pausedReason: null,
      });
      // A period on: every grant has left the window.
      await setDatabaseClockOffset(url(), 61_000);
      expect((await cw.rateLimits())[0]).toMatchObject({
        keys: 0,
        spent: 0,
        limitedKeys: 0,
        busiest: [],
      });
    } finally {
      await cw.close();
    }
  });

  it.each([
    { keysPerLimit: 0 },
    { keysPerLimit: 101 },
    { keysPerLimit: 2.5 },
    { keysPerLimit: '3' },
    { name: 5 },
  ])('refuses %o with invalid_request', async (request) => {
    const cw = engine();
    try {
      const error = await cw
        .rateLimits(request as Parameters<typeof cw.rateLimits>[0])
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(EngineError);
      expect((error as EngineError).code).toBe('invalid_request');
    } finally {
      await cw.close();
    }
  });
});
