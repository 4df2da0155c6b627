/**
 * R51 with real workers: three engines' workers race over two keys of a limit of 4 per
 * 300 ms; the log never holds more than 4 grants of a key in any 300 ms of database time, and
 * some window is full (the race was real). A step that hears "too busy" with a wait pauses its
 * key for every task until then, with who and why on the key's row.
 */
import { defineWorkflow, rateLimit, StepError, step } from '@causeway/workflow';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { waitAllSucceeded } from './concurrency-key-log';
import { rateWindowOverflows } from './rate-limit-log';

const database = useTestDatabase();
const url = () => database().url;

const input = z.object({ account: z.string(), n: z.number().int() });
type Input = z.output<typeof input>;

const posts = rateLimit({ name: 'posts', limit: 4, periodMs: 300 });
const answered429 = new Set<string>();
const racing = defineWorkflow({
  name: 'rate-race',
  input,
  steps: {
    only: step<Input>({
      queue: 'q-rate-race',
      maxAttempts: 1,
      rateLimit: { name: 'posts', key: (ctx) => ctx.input.account },
      run: async () => {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
        return null;
      },
    }),
  },
});
const throttling = defineWorkflow({
  name: 'rate-429',
  input,
  steps: {
    only: step<Input>({
      queue: 'q-rate-429',
      maxAttempts: 3,
      rateLimit: { name: 'posts', key: (ctx) => ctx.input.account },
      run: (ctx) => {
        // The platform answers the first post of the account 429, Retry-After 30 s.
        if (ctx.input.n === 0 && !answered429.has(ctx.input.account)) {
          answered429.add(ctx.input.account);
          throw new StepError('throttled', 'HTTP 429 from the platform', { retryAfterMs: 30_000 });
        }
        return null;
      },
    }),
  },
});
const workflows = [racing, throttling];
const rateLimits = [posts];

beforeAll(async () => {
  const setup = testEngine(url(), { workflows, rateLimits });
  await setup.migrate();
  await setup.close();
});

afterEach(() => setDatabaseClockOffset(url(), 0));

describe('rate limits under racing workers (R51)', () => {
  it('never grant a key more than its limit in any period, on the log’s database time', async () => {
    const engines = [0, 1, 2].map(() => testEngine(url(), { workflows, rateLimits }));
    const submitted = await engines[0]?.submitMany(
      Array.from({ length: 48 }, (_, n) => ({
        name: 'rate-race',
        input: { account: n % 2 === 0 ? 'even' : 'odd', n },
      })),
    );
    const ids = (submitted ?? []).map((result) => result.workflow.id);
    for (const cw of engines) await cw.startWorker({ queues: ['q-rate-race'], concurrency: 8 });
    await waitAllSucceeded(url(), ids, 30_000, 'every rate-limited workflow succeeded');
    for (const cw of engines) await cw.close();
    expect(await rateWindowOverflows(url(), rateLimits)).toEqual([]);
    // The race was real: some period held all four grants of a key.
    const [full] = await query<{ most: number }>(
      url(),
      `select max(n)::int as most from (
         select count(*) over (partition by t.rate_key order by l.at
           range between interval '299.999 milliseconds' preceding and current row) as n
         from causeway_transitions as l join causeway_tasks as t on t.id = l.task_id
         where l.reason = 'lease_acquired' and t.rate_name = 'posts' and t.queue = 'q-rate-race'
       ) as w`,
    );
    expect(full?.most).toBe(4);
    expect(await logMismatches(url())).toEqual([]);
  }, 60_000);

  it('claims a spent key again when it has room, not at the next poll', async () => {
    // Polls a minute apart: only the claim's own word on the key's next slot brings the
    // worker back in time.
    const cw = testEngine(url(), { workflows, rateLimits, pollIntervalMs: 60_000 });
    await cw.startWorker({ queues: ['q-rate-race'], concurrency: 8 });
    const submitted = await cw.submitMany(
      Array.from({ length: 12 }, (_, n) => ({ name: 'rate-race', input: { account: 'slow', n } })),
    );
    // Three periods of 300 ms after the first burst of 4.
    await waitAllSucceeded(
      url(),
      submitted.map((result) => result.workflow.id),
      5_000,
      'a spent key claimed again at its next slots',
    );
    await cw.close();
    expect(await rateWindowOverflows(url(), rateLimits)).toEqual([]);
  });

  it('pauses a key for every task when a step of it hears "too busy", until the wait passes', async () => {
    const cw = testEngine(url(), { workflows, rateLimits });
    const [first] = await cw.submitMany([{ name: 'rate-429', input: { account: 'acme', n: 0 } }]);
    await cw.startWorker({ queues: ['q-rate-429'], concurrency: 2 });
    const pausedRow = async () =>
      (
        await query<{ until_ms: number; by: string; reason: string }>(
          url(),
          `select extract(epoch from paused_until - causeway_now())::float8 * 1000 as until_ms,
             paused_by_task::text as by, paused_reason as reason
           from causeway_rate_windows where name = 'posts' and key = 'acme'
             and paused_until is not null`,
        )
      )[0];
    await waitFor(async () => (await pausedRow()) !== undefined, {
      description: 'the key paused',
    });
    const [task] = await query<{ id: string }>(
      url(),
      'select id from causeway_tasks where workflow_id = $1',
      [first?.workflow.id],
    );
    const paused = await pausedRow();
    expect(paused?.by).toBe(task?.id);
    expect(paused?.reason).toBe('HTTP 429 from the platform');
    expect(paused?.until_ms).toBeGreaterThan(25_000);
    // Another task of the key waits with it; one of another key does not.
    const [second, other] = await cw.submitMany([
      { name: 'rate-429', input: { account: 'acme', n: 1 } },
      { name: 'rate-429', input: { account: 'globex', n: 1 } },
    ]);
    await waitAllSucceeded(url(), [other?.workflow.id as string], 10_000, 'the other key ran');
    const states = await query<{ state: string }>(
      url(),
      'select state from causeway_tasks where workflow_id = any($1::uuid[]) order by workflow_id',
      [[first?.workflow.id, second?.workflow.id]],
    );
    expect(states.map((row) => row.state)).toEqual(['queued', 'queued']);
    // Thirty seconds on (database time), both run: the retry at its time, the other after it.
    await setDatabaseClockOffset(url(), 30_000);
    await waitAllSucceeded(
      url(),
      [first?.workflow.id as string, second?.workflow.id as string],
      10_000,
      'the paused key ran once the wait passed',
    );
    await cw.close();
    expect(await logMismatches(url())).toEqual([]);
  }, 60_000);
});
