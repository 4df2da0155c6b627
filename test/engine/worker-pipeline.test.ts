import { defineWorkflow, step } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

/**
 * The worker's pipeline: a finished handler frees its slot before its result is written,
 * and the transaction that writes results also claims for the freed slots. Neither may let
 * more handlers run than the pool allows (R32), and a next step made ready by a result is
 * claimed in that same transaction.
 */
const database = useTestDatabase();

const chain = defineWorkflow({
  name: 'pipeline-chain',
  input: z.object({}),
  steps: {
    a: step({ run: () => 'a' }),
    b: step({ after: ['a'], run: () => 'b' }),
    c: step({ after: ['b'], run: () => 'c' }),
  },
});

let running = 0;
let mostRunning = 0;
const busy = defineWorkflow({
  name: 'pipeline-busy',
  input: z.object({ i: z.number().int() }),
  steps: {
    only: step<{ i: number }>({
      run: async (ctx) => {
        running += 1;
        mostRunning = Math.max(mostRunning, running);
        await new Promise((resolve) => setTimeout(resolve, 1 + (ctx.input.i % 3)));
        running -= 1;
        return ctx.input.i;
      },
    }),
  },
});

/** Each run submits the next workflow while it runs, so the next wake-up races its settle. */
let submitNext: (() => void) | null = null;
const relay = defineWorkflow({
  name: 'pipeline-relay',
  input: z.object({ i: z.number().int() }),
  steps: {
    only: step<{ i: number }>({
      run: (ctx) => {
        submitNext?.();
        return ctx.input.i;
      },
    }),
  },
});

describe('worker pipeline', () => {
  it('never sleeps through a wake-up that arrives while results are being written', async () => {
    // Polling is off in practice (60 s): a lost wake-up would leave the next workflow queued.
    const url = database().url;
    const producer = testEngine(url, { workflows: [relay] });
    await producer.migrate();
    const engine = testEngine(url, { workflows: [relay], pollIntervalMs: 60_000 });
    const worker = await engine.startWorker({ concurrency: 1 });
    const runs = 150;
    let submitted = 0;
    const pending: Promise<unknown>[] = [];
    submitNext = () => {
      if (submitted >= runs) return;
      submitted += 1;
      pending.push(producer.submit('pipeline-relay', { i: submitted }));
    };
    submitNext();
    await waitFor(
      async () => {
        const done = await query<{ n: number }>(
          url,
          `select count(*)::int as n from causeway_workflows
            where name = 'pipeline-relay' and state = 'succeeded'`,
        );
        return done[0]?.n === runs;
      },
      { timeoutMs: 15_000, description: 'every relayed workflow succeeded without polling' },
    );
    submitNext = null;
    await Promise.all(pending);
    await worker.stop();
    expect(await logMismatches(url)).toEqual([]);
  });

  it('claims the next step in the transaction that writes the previous result', async () => {
    // Polling is off in practice (60 s): only a settle transaction or a wake-up can claim.
    const engine = testEngine(database().url, { workflows: [chain], pollIntervalMs: 60_000 });
    await engine.migrate();
    const worker = await engine.startWorker({ concurrency: 1 });
    let sameTransaction = 0;
    let pairs = 0;
    for (let run = 0; run < 10; run += 1) {
      const { workflow } = await engine.submit('pipeline-chain', {});
      await waitFor(async () => (await engine.getWorkflow(workflow.id))?.state === 'succeeded');
      // xmin: the id of the transaction that inserted the row.
      const rows = await query<{ step: string; reason: string; tx: string }>(
        database().url,
        `select step, reason, xmin::text as tx from causeway_transitions
          where workflow_id = $1 and task_id is not null and reason in ('completed', 'lease_acquired')
          order by id`,
        [workflow.id],
      );
      const tx = (step: string, reason: string) =>
        rows.find((row) => row.step === step && row.reason === reason)?.tx;
      for (const [upstream, downstream] of [
        ['a', 'b'],
        ['b', 'c'],
      ] as const) {
        const completed = tx(upstream, 'completed');
        const claimed = tx(downstream, 'lease_acquired');
        expect(completed).toBeDefined();
        expect(claimed).toBeDefined();
        pairs += 1;
        if (claimed === completed) sameTransaction += 1;
      }
    }
    await worker.stop();
    // A wake-up may now and then win the slot first; the settle transaction takes most.
    expect(sameTransaction).toBeGreaterThanOrEqual(pairs / 4);
    expect(await logMismatches(database().url)).toEqual([]);
  });

  it.each([
    { concurrency: 3, prefetch: 0 },
    { concurrency: 2, prefetch: 5 },
  ])(
    'never runs more handlers than the pool allows while results are being written ($concurrency + prefetch $prefetch)',
    async ({ concurrency, prefetch }) => {
      running = 0;
      mostRunning = 0;
      const engine = testEngine(database().url, { workflows: [busy] });
      await engine.migrate();
      const n = 150;
      const submitted = await engine.submitMany(
        Array.from({ length: n }, (_, i) => ({ name: 'pipeline-busy', input: { i } })),
      );
      const ids = submitted.map((result) => result.workflow.id);
      const worker = await engine.startWorker({ concurrency, prefetch });
      // Leases held at once: running + prefetched + results still being written (≤ one pool).
      let mostLeased = 0;
      await waitFor(
        async () => {
          const leased = await query<{ n: number }>(
            database().url,
            `select count(*)::int as n from causeway_tasks where state = 'leased'`,
          );
          mostLeased = Math.max(mostLeased, leased[0]?.n ?? 0);
          const done = await query<{ n: number }>(
            database().url,
            `select count(*)::int as n from causeway_workflows where id = any($1::uuid[]) and state = 'succeeded'`,
            [ids],
          );
          return done[0]?.n === n;
        },
        { timeoutMs: 15_000, intervalMs: 2, description: 'every busy workflow succeeded' },
      );
      await worker.stop();
      expect(mostRunning).toBe(concurrency);
      expect(mostLeased).toBeGreaterThan(0);
      expect(mostLeased).toBeLessThanOrEqual(2 * concurrency + prefetch);
      const attempts = await query<{ attempt: number; n: number }>(
        database().url,
        `select t.attempt, count(*)::int as n from causeway_tasks t
        where t.workflow_id = any($1::uuid[]) group by t.attempt`,
        [ids],
      );
      expect(attempts).toEqual([{ attempt: 1, n }]);
      expect(await logMismatches(database().url)).toEqual([]);
    },
  );
});
