/**
 * R50: concurrency keys. At most `limit` tasks of a group and key hold a slot at once, counted
 * from the tasks' states in the claim (both claim paths); a full key never delays another; a
 * claim takes keys in the order of their oldest due task; the settle statement never chains a
 * keyed step past the count; bad definitions and keys are refused and write nothing.
 */
import { type Engine, EngineError } from '@causeway/engine';
import { DefinitionError, defineWorkflow, step } from '@causeway/workflow';
import { workflowRegistry } from '@causeway/workflow/internal';
import { type Kysely, sql, type Transaction } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { claimInFull } from '../../packages/engine/src/runtime/claim/claim-in-full';
import { claimReadyTasks } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { lockWaiterCount } from '../helpers/lock-waiters';
import { waitFor } from '../helpers/wait-for';
import { rolledBack } from './stored-runs';

const database = useTestDatabase();
const url = () => database().url;

const queue = 'q-keys';
const input = z.object({ tenant: z.string(), n: z.number().int() });
type Input = z.output<typeof input>;

const keyed = defineWorkflow({
  name: 'keyed-work',
  input,
  steps: {
    only: step<Input>({
      queue,
      maxAttempts: 1,
      concurrency: { key: (ctx) => ctx.input.tenant, limit: 2 },
      run: () => null,
    }),
  },
});
const plain = defineWorkflow({
  name: 'keyed-plain',
  input,
  steps: { only: step<Input>({ queue, maxAttempts: 1, run: () => null }) },
});
const barrierQueue = 'q-keys-barrier';
const barrier = defineWorkflow({
  name: 'keyed-barrier',
  input,
  steps: {
    only: step<Input>({
      queue: barrierQueue,
      maxAttempts: 1,
      concurrency: { key: (ctx) => ctx.input.tenant, limit: 2, group: 'barrier' },
      run: () => null,
    }),
  },
});
const workflows = [keyed, plain, barrier];
const apply = () => ({
  definitions: workflowRegistry(workflows),
  leaseMs: 30_000,
  random: Math.random,
});
const engine = (): Engine => testEngine(url(), { workflows });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

type Path = 'one statement' | 'in full';
const paths: readonly Path[] = ['one statement', 'in full'];

async function claim(cw: Engine, tx: Transaction<CausewayDatabase>, path: Path, limit: number) {
  const request = { queue, limit, holder: cw.holder };
  const result =
    path === 'one statement'
      ? await claimReadyTasks(tx, apply(), request)
      : await claimInFull(tx, apply(), request);
  return result.claimed.map((claimed) => claimed.task.id);
}

/** Submits in `tx`, one submit each, `delayMs` apart in claim order; returns task ids. */
async function submitAll(
  cw: Engine,
  tx: Transaction<CausewayDatabase>,
  planned: readonly { readonly tenant: string | null; readonly delayMs?: number }[],
): Promise<string[]> {
  const ids: string[] = [];
  for (const [n, item] of planned.entries()) {
    const { workflow } = await cw.submit(
      item.tenant === null ? plain.name : keyed.name,
      { tenant: item.tenant ?? 'none', n },
      { transaction: tx, ...(item.delayMs === undefined ? {} : { delayMs: item.delayMs }) },
    );
    const { rows } = await sql<{ id: string }>`
      select id from causeway_tasks where workflow_id = ${workflow.id}`.execute(tx);
    ids.push(rows[0]?.id as string);
  }
  // Everything submitted is due, in the order of its delays.
  await sql`update causeway_clock set offset_ms = offset_ms + 60000`.execute(tx);
  return ids;
}

describe.each(paths)('a claim %s counts slots from task states (R50)', (path) => {
  it('takes at most limit − held of each key, and other keys and plain tasks beside', async () => {
    const cw = engine();
    const result = await rolledBack(cw.db as Kysely<CausewayDatabase>, async (tx) => {
      const ids = await submitAll(cw, tx, [
        ...Array.from({ length: 5 }, (_, n) => ({ tenant: 'acme', delayMs: n })),
        ...Array.from({ length: 3 }, (_, n) => ({ tenant: 'bolt', delayMs: 10 + n })),
        { tenant: null, delayMs: 20 },
      ]);
      const label = (claimed: readonly string[]) => claimed.map((id) => ids.indexOf(id)).sort();
      const first = label(await claim(cw, tx, path, 10));
      const second = label(await claim(cw, tx, path, 10));
      // One of acme's holders ends: one slot of acme is free again, and only one.
      await sql`update causeway_tasks set state = 'succeeded', lease_holder = null
        where id = ${ids[0]}`.execute(tx);
      const third = label(await claim(cw, tx, path, 10));
      return { first, second, third };
    });
    expect(result.first).toEqual([0, 1, 5, 6, 8]);
    expect(result.second).toEqual([]);
    expect(result.third).toEqual([2]);
    await cw.close();
  });

  it('takes keys in the order of their oldest due task; a full key delays no other', async () => {
    const cw = engine();
    const result = await rolledBack(cw.db as Kysely<CausewayDatabase>, async (tx) => {
      // A hot key whose 300 tasks are all older than 20 cold keys' one each.
      const ids = await submitAll(cw, tx, [
        ...Array.from({ length: 300 }, () => ({ tenant: 'hot', delayMs: 0 })),
        ...Array.from({ length: 20 }, (_, n) => ({ tenant: `cold-${n}`, delayMs: 100 + n })),
      ]);
      const first = await claim(cw, tx, path, 22);
      const second = await claim(cw, tx, path, 22);
      return {
        hot: first.filter((id) => ids.indexOf(id) < 300).length,
        cold: first.filter((id) => ids.indexOf(id) >= 300).length,
        second: second.length,
      };
    });
    // The hot key's two slots, and every cold task in the same claim.
    expect(result).toEqual({ hot: 2, cold: 20, second: 0 });
    await cw.close();
  });
});

describe.each(paths)('a claim %s whose snapshot missed a racing grant (R50)', (path) => {
  it('takes none of that key, so the key never holds more than its limit', async () => {
    const cw = engine();
    const tenant = `barrier-${path.replace(' ', '-')}`;
    for (let n = 0; n < 5; n += 1) await cw.submit(barrier.name, { tenant, n });
    await sql`update causeway_clock set offset_ms = offset_ms + 60000`.execute(cw.db);
    const request = { queue: barrierQueue, limit: 5, holder: cw.holder };
    const claimBy = (tx: Transaction<CausewayDatabase>) =>
      path === 'one statement'
        ? claimReadyTasks(tx, apply(), request)
        : claimInFull(tx, apply(), request);
    let commitFirst: () => void = () => {};
    const firstMayCommit = new Promise<void>((resolve) => {
      commitFirst = resolve;
    });
    let firstClaimed = -1;
    const first = cw.db.transaction().execute(async (tx) => {
      firstClaimed = (await claimBy(tx)).claimed.length;
      await firstMayCommit;
    });
    await waitFor(async () => firstClaimed >= 0, { timeoutMs: 5_000, description: 'first claim' });
    // The second claim's snapshot is taken while the first's grant is uncommitted: it counts
    // the key's two slots free, and waits for the key's row.
    const second = cw.db.transaction().execute(async (tx) => (await claimBy(tx)).claimed.length);
    await waitFor(async () => (await lockWaiterCount(url())) === 1, {
      timeoutMs: 5_000,
      description: 'the second claim waits for the key row',
    });
    commitFirst();
    await first;
    expect(firstClaimed).toBe(2);
    expect(await second).toBe(0);
    const [held] = await query<{ n: number }>(
      url(),
      `select count(*)::int as n from causeway_tasks
       where concurrency_key = $1 and state = 'leased'`,
      [tenant],
    );
    expect(held?.n).toBe(2);
    await cw.close();
  });
});

describe('the blocker of a task whose key holds its limit (R50)', () => {
  it('is concurrency_limited, naming the group, key, limit and the holding tasks', async () => {
    const cw = engine();
    const tenant = 'blocked-tenant';
    const ids: string[] = [];
    for (let n = 0; n < 3; n += 1) {
      ids.push((await cw.submit(barrier.name, { tenant, n })).workflow.id);
    }
    await sql`update causeway_clock set offset_ms = offset_ms + 60000`.execute(cw.db);
    const claimed = await claimReadyTasks(cw.db as Kysely<CausewayDatabase>, apply(), {
      queue: barrierQueue,
      limit: 5,
      holder: cw.holder,
    });
    const holders = claimed.claimed.filter((task) => ids.includes(task.task.workflowId));
    expect(holders).toHaveLength(2);
    const waiting = ids.find((id) => !holders.some((task) => task.task.workflowId === id));
    const [blocker] = (await cw.blockers(waiting as string)) ?? [];
    expect(blocker?.code).toBe('concurrency_limited');
    expect(blocker?.facts).toMatchObject({ group: 'barrier', key: tenant, limit: 2 });
    const named = (
      (blocker?.facts.holders ?? []) as { taskId: string; state: string; holder: string }[]
    )
      .map((holder) => [holder.taskId, holder.state, holder.holder])
      .sort();
    expect(named).toEqual(holders.map((task) => [task.task.id, 'leased', cw.holder]).sort());
    expect(blocker?.message).toContain(
      `key "${tenant}" of concurrency group "barrier" holds its limit of 2`,
    );
    // A holder's blocker is its own (running), not the key's.
    const [running] = (await cw.blockers(holders[0]?.task.workflowId as string)) ?? [];
    expect(running?.code).not.toBe('concurrency_limited');
    await cw.close();
  });
});

describe('bad concurrency options and keys', () => {
  it('refuses a limit that is not a positive integer, or no key function, at definition', () => {
    for (const concurrency of [
      { key: () => 'k', limit: 0 },
      { key: () => 'k', limit: 1.5 },
      { key: () => 'k', limit: 10_001 },
      { key: 'k', limit: 1 },
      { key: () => 'k', limit: 1, group: '' },
    ]) {
      expect(() => step({ concurrency: concurrency as never, run: () => null })).toThrowError(
        DefinitionError,
      );
    }
  });

  it('refuses a key function that throws or gives no key with invalid_concurrency_key, writing nothing', async () => {
    const fussy = defineWorkflow({
      name: 'keyed-fussy',
      input,
      steps: {
        only: step<Input>({
          concurrency: {
            key: (ctx) => {
              if (ctx.input.tenant === 'throw') throw new Error('no tenant');
              return ctx.input.tenant === 'empty' ? '' : ctx.input.tenant.repeat(300);
            },
            limit: 1,
          },
          run: () => null,
        }),
      },
    });
    const cw = testEngine(url(), { workflows: [fussy] });
    const count = async () =>
      (await query<{ n: number }>(url(), 'select count(*)::int as n from causeway_workflows'))[0]
        ?.n;
    const before = await count();
    for (const tenant of ['throw', 'empty', 'long']) {
      const error = await cw.submit('keyed-fussy', { tenant, n: 0 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EngineError);
      expect((error as EngineError).code).toBe('invalid_concurrency_key');
    }
    expect(await count()).toBe(before);
  });
});
