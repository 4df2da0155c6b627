/**
 * R50 with real workers: racing workers never put more tasks on a key than its limit, by the
 * log's own lease intervals; the settle statement never chains a keyed step; a settle that
 * frees a slot wakes the claimers, so a key's next task does not wait for a poll.
 */
import type { Engine } from '@causeway/engine';
import { defineWorkflow, step } from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { chainedLeases, logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { maxSlotOverlap, waitAllSucceeded } from './concurrency-key-log';

const database = useTestDatabase();
const url = () => database().url;

const input = z.object({ tenant: z.string(), n: z.number().int() });
type Input = z.output<typeof input>;

beforeAll(async () => {
  const setup = testEngine(url(), { workflows: [] });
  await setup.migrate();
  await setup.close();
});

describe('racing workers over shared keys', () => {
  it('never hold more than the limit per key, on the log’s database time', async () => {
    const racing = defineWorkflow({
      name: 'keyed-race',
      input,
      steps: {
        only: step<Input>({
          queue: 'q-keys-race',
          concurrency: { key: (ctx) => ctx.input.tenant, limit: 2, group: 'tenants' },
          run: async () => {
            await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 20));
            return null;
          },
        }),
      },
    });
    const engines = [0, 1, 2].map(() =>
      testEngine(url(), { workflows: [racing], pollIntervalMs: 20 }),
    );
    for (const cw of engines) await cw.startWorker({ concurrency: 6 });
    const ids: string[] = [];
    for (let n = 0; n < 120; n += 1) {
      const cw = engines[n % engines.length] as Engine;
      ids.push((await cw.submit('keyed-race', { tenant: `t${n % 5}`, n })).workflow.id);
    }
    await waitAllSucceeded(url(), ids, 60_000, 'every keyed workflow succeeded');
    const overlap = await maxSlotOverlap(url(), 'tenants');
    expect(overlap.size).toBe(5);
    for (const most of overlap.values()) expect(most).toBeLessThanOrEqual(2);
    // Racing over five keys of two slots, some key had both slots held at once.
    expect(Math.max(...overlap.values())).toBe(2);
    expect(await logMismatches(url())).toEqual([]);
  }, 90_000);
});

describe('the settle statement and keyed steps', () => {
  it('never chains a keyed step: a claim that counts its key takes it', async () => {
    const twoSteps = defineWorkflow({
      name: 'keyed-second',
      input,
      steps: {
        first: step<Input>({ run: () => null }),
        second: step<Input>({
          after: ['first'],
          concurrency: { key: (ctx) => ctx.input.tenant, limit: 1 },
          run: async () => {
            await new Promise((resolve) => setTimeout(resolve, 10));
            return null;
          },
        }),
      },
    });
    const cw = testEngine(url(), { workflows: [twoSteps], pollIntervalMs: 20 });
    await cw.startWorker({ concurrency: 4 });
    const ids: string[] = [];
    for (let n = 0; n < 12; n += 1) {
      ids.push((await cw.submit('keyed-second', { tenant: 'one', n })).workflow.id);
    }
    await waitAllSucceeded(url(), ids, 30_000, 'every two-step workflow succeeded');
    const chained = await chainedLeases(url(), ids);
    expect(chained.filter((row) => row.step === 'second')).toEqual([]);
    const overlap = await maxSlotOverlap(url(), 'keyed-second/second');
    expect(overlap.get('one')).toBe(1);
  }, 60_000);
});

describe('a freed slot wakes the claimers (R50)', () => {
  it('a key’s next task is claimed when a holder ends, not at the next poll', async () => {
    const serial = defineWorkflow({
      name: 'keyed-serial',
      input,
      steps: {
        only: step<Input>({
          concurrency: { key: (ctx) => ctx.input.tenant, limit: 1 },
          run: () => null,
        }),
      },
    });
    // Polls an hour apart: only a wakeup can move the key's next task.
    const cw = testEngine(url(), { workflows: [serial], pollIntervalMs: 3_600_000 });
    await cw.startWorker({ concurrency: 4 });
    const ids: string[] = [];
    for (let n = 0; n < 6; n += 1) {
      ids.push((await cw.submit('keyed-serial', { tenant: 'solo', n })).workflow.id);
    }
    await waitAllSucceeded(url(), ids, 20_000, 'the key’s six tasks ran one after another');
  }, 30_000);
});

describe('heads of keys whose queued tasks left without a claim (R50)', () => {
  it('are moved on by the sweeper, never past a task still queued', async () => {
    const later = defineWorkflow({
      name: 'keyed-later',
      input,
      steps: {
        only: step<Input>({
          concurrency: { key: (ctx) => ctx.input.tenant, limit: 1, group: 'later' },
          run: () => null,
        }),
      },
    });
    const cw = testEngine(url(), { workflows: [later], sweepIntervalMs: 50 });
    const gone = await cw.submit('keyed-later', { tenant: 'gone', n: 0 }, { delayMs: 3_600_000 });
    await cw.submit('keyed-later', { tenant: 'kept', n: 1 }, { delayMs: 3_600_000 });
    await cw.cancelWorkflow(gone.workflow.id);
    const heads = async () =>
      Object.fromEntries(
        (
          await query<{ key: string; head: boolean }>(
            url(),
            `select concurrency_key as key, head_at is not null as head
             from causeway_concurrency_keys where concurrency_group = 'later'`,
          )
        ).map((row) => [row.key, row.head]),
      );
    // The cancel left the gone key's head behind; the sweeper (run by a worker) clears it.
    expect(await heads()).toEqual({ gone: true, kept: true });
    await cw.startWorker({ concurrency: 1 });
    await waitFor(async () => (await heads()).gone === false, {
      timeoutMs: 10_000,
      description: 'the sweeper cleared the head of a key with nothing queued',
    });
    expect(await heads()).toEqual({ gone: false, kept: true });
  }, 30_000);
});
