/**
 * R51: rate limits. Claims spend a limit of (name, key) on the database clock, exactly: in any
 * window of the period, the grants of a key cost at most the limit (both claim paths, racing
 * workers, read from the log); a spent key never holds back another; a step that hears "too
 * busy" pauses its key for every task; bad declarations and keys are refused and write nothing.
 */
import { type Engine, EngineError } from '@causeway/engine';
import { DefinitionError, defineWorkflow, rateLimit, step } from '@causeway/workflow';
import { workflowRegistry } from '@causeway/workflow/internal';
import { sql } from 'kysely';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { claimInFull } from '../../packages/engine/src/runtime/claim/claim-in-full';
import { claimReadyTasks } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { lockWaiterCount } from '../helpers/lock-waiters';
import { waitFor } from '../helpers/wait-for';
import { rateWindowOverflows } from './rate-limit-log';

const database = useTestDatabase();
const url = () => database().url;

const input = z.object({ account: z.string(), n: z.number().int() });
type Input = z.output<typeof input>;

const platform = rateLimit({ name: 'platform', limit: 3, periodMs: 60_000 });
const heavy = rateLimit({ name: 'heavy', limit: 3, periodMs: 60_000 });
const rateLimits = [platform, heavy];

function rated(name: string, queue: string, limit: string, cost?: number) {
  return defineWorkflow({
    name,
    input,
    steps: {
      only: step<Input>({
        queue,
        maxAttempts: 1,
        rateLimit: {
          name: limit,
          key: (ctx) => ctx.input.account,
          ...(cost === undefined ? {} : { cost }),
        },
        run: () => null,
      }),
    },
  });
}

const posting = rated('rate-post', 'q-rate', 'platform');
const heavyPosting = rated('rate-heavy', 'q-rate-heavy', 'heavy', 2);
const workflows = [posting, heavyPosting];
const apply = () => ({
  definitions: workflowRegistry(workflows),
  leaseMs: 30_000,
  random: Math.random,
  rateLimits,
});
const engine = (): Engine => testEngine(url(), { workflows, rateLimits });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

afterEach(() => setDatabaseClockOffset(url(), 0));

type Path = 'one statement' | 'in full';
const paths: readonly Path[] = ['one statement', 'in full'];

async function claim(cw: Engine, path: Path, queue: string, limit: number): Promise<string[]> {
  const request = { queue, limit, holder: cw.holder };
  const result =
    path === 'one statement'
      ? await claimReadyTasks(cw.db, apply(), request)
      : await cw.db.transaction().execute((tx) => claimInFull(tx, apply(), request));
  return result.claimed.map((claimed) => claimed.task.id);
}

async function accountsOf(ids: readonly string[]): Promise<string[]> {
  const rows = await query<{ account: string }>(
    url(),
    `select w.input->>'account' as account from causeway_tasks as t
     join causeway_workflows as w on w.id = t.workflow_id where t.id = any($1::uuid[])
     order by account`,
    [ids],
  );
  return rows.map((row) => row.account);
}

async function submitPosts(cw: Engine, name: string, accounts: readonly string[]) {
  await cw.submitMany(accounts.map((account, n) => ({ name, input: { account, n } })));
}

describe.each(paths)('a claim %s spends a rate limit (R51)', (path) => {
  const tag = path === 'one statement' ? 'one' : 'full';
  it('takes what fits each key, passes a spent key, and takes again once the period moved on', async () => {
    const cw = engine();
    const [a, b, c] = [`${tag}-a`, `${tag}-b`, `${tag}-c`];
    try {
      await submitPosts(cw, 'rate-post', [...Array(10).fill(a), b]);
      const first = await claim(cw, path, 'q-rate', 20);
      // Three of the spent key, and the other key's task beside them.
      expect(await accountsOf(first)).toEqual([a, a, a, b]);
      // Spent: nothing more of `a` within the minute, however often claims come, while
      // another key's new task is taken at once.
      expect(await claim(cw, path, 'q-rate', 20)).toEqual([]);
      await submitPosts(cw, 'rate-post', [c]);
      expect(await accountsOf(await claim(cw, path, 'q-rate', 20))).toEqual([c]);
      const [window] = await query<{ spent: number; blocked: boolean }>(
        url(),
        `select coalesce(array_length(spent_at, 1), 0) as spent,
           blocked_until = spent_at[1] + interval '60 seconds' as blocked
         from causeway_rate_windows where name = 'platform' and key = $1`,
        [a],
      );
      expect(window).toEqual({ spent: 1, blocked: true });
      // A minute on (database time), the first grant has left the period: three more.
      await setDatabaseClockOffset(url(), 60_000);
      expect(await accountsOf(await claim(cw, path, 'q-rate', 20))).toEqual([a, a, a]);
      expect(await claim(cw, path, 'q-rate', 20)).toEqual([]);
      expect(await rateWindowOverflows(url(), rateLimits)).toEqual([]);
      expect(await logMismatches(url())).toEqual([]);
    } finally {
      await cw.close();
    }
  });

  it('spends each task’s cost: a cost of 2 under a limit of 3 takes one a period', async () => {
    const cw = engine();
    const account = `${tag}-heavy`;
    try {
      await submitPosts(cw, 'rate-heavy', [account, account, account]);
      expect(await claim(cw, path, 'q-rate-heavy', 10)).toHaveLength(1);
      expect(await claim(cw, path, 'q-rate-heavy', 10)).toEqual([]);
      await setDatabaseClockOffset(url(), 60_000);
      expect(await claim(cw, path, 'q-rate-heavy', 10)).toHaveLength(1);
      expect(await rateWindowOverflows(url(), rateLimits)).toEqual([]);
    } finally {
      await cw.close();
    }
  });
});

describe.each(paths)(
  'a claim %s that read its clock before a grant it waited for (R51)',
  (path) => {
    it('takes none of that key this round, so grants stay in time order', async () => {
      const cw = engine();
      const account = `guard-${path.replace(' ', '-')}`;
      await submitPosts(cw, 'rate-post', [account, account, account, account]);
      // A stand-in holds the key's row, so the second claim reads its clock, locks two tasks
      // and waits; then the first claim, later by the clock, grants one task and commits.
      let releaseFirst: () => void = () => {};
      const firstMayRun = new Promise<void>((resolve) => {
        releaseFirst = resolve;
      });
      let firstClaimed = -1;
      let locked: () => void = () => {};
      const rowLocked = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const first = cw.db.transaction().execute(async (tx) => {
        await sql`select 1 from causeway_rate_windows where name = 'platform' and key = ${account}
        for update`.execute(tx);
        locked();
        await firstMayRun;
        firstClaimed = (
          await (path === 'one statement'
            ? claimReadyTasks(tx, apply(), { queue: 'q-rate', limit: 1, holder: cw.holder })
            : claimInFull(tx, apply(), { queue: 'q-rate', limit: 1, holder: cw.holder }))
        ).claimed.length;
      });
      await rowLocked;
      const second = claim(cw, path, 'q-rate', 2);
      await waitFor(async () => (await lockWaiterCount(url())) === 1, {
        timeoutMs: 5_000,
        description: 'the second claim waits for the key row',
      });
      releaseFirst();
      await first;
      expect(firstClaimed).toBe(1);
      // Room for two more, but its time is earlier than the grant the row now keeps.
      expect(await second).toEqual([]);
      const [window] = await query<{ ordered: boolean; spent: number }>(
        url(),
        `select spent_at = array(select unnest(spent_at) order by 1) as ordered,
         cardinality(spent_at) as spent
       from causeway_rate_windows where name = 'platform' and key = $1`,
        [account],
      );
      expect(window).toEqual({ ordered: true, spent: 1 });
      // The next claim takes the room left.
      expect(await claim(cw, path, 'q-rate', 5)).toHaveLength(2);
      expect(await rateWindowOverflows(url(), rateLimits)).toEqual([]);
      await cw.close();
    });
  },
);

describe('bad rate limits and keys (R51, R58)', () => {
  it('refuses an engine whose step spends a limit it does not declare, or more than the limit', () => {
    expect(() => testEngine(url(), { workflows: [posting] })).toThrow(DefinitionError);
    expect(() =>
      testEngine(url(), {
        workflows: [posting],
        rateLimits: [rateLimit({ name: 'platform', limit: 1, periodMs: 1_000 }), platform],
      }),
    ).toThrow(/platform/);
    expect(() =>
      testEngine(url(), {
        workflows: [heavyPosting],
        rateLimits: [rateLimit({ name: 'heavy', limit: 1, periodMs: 1_000 })],
      }),
    ).toThrow(DefinitionError);
  });

  it('refuses a key function that throws or gives no key with invalid_rate_limit_key, writing nothing', async () => {
    const fussy = defineWorkflow({
      name: 'rate-fussy',
      input,
      steps: {
        only: step<Input>({
          rateLimit: {
            name: 'platform',
            key: (ctx) => {
              if (ctx.input.account === 'throw') throw new Error('no account');
              return ctx.input.account === 'empty' ? '' : ctx.input.account.repeat(300);
            },
          },
          run: () => null,
        }),
      },
    });
    const cw = testEngine(url(), { workflows: [fussy], rateLimits });
    const count = async (table: string) =>
      (await query<{ n: number }>(url(), `select count(*)::int as n from ${table}`))[0]?.n;
    const before = [await count('causeway_workflows'), await count('causeway_rate_windows')];
    for (const account of ['throw', 'empty', 'long']) {
      const error = await cw.submit('rate-fussy', { account, n: 0 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EngineError);
      expect((error as EngineError).code).toBe('invalid_rate_limit_key');
    }
    expect([await count('causeway_workflows'), await count('causeway_rate_windows')]).toEqual(
      before,
    );
    await cw.close();
  });
});
