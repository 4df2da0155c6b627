import { defineWorkflow, step } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { chainedLeases, logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

/**
 * The worker's pipeline: a finished handler frees its slot before its result is written, so
 * the claim for that slot overlaps the write. That may not let more handlers run than the
 * pool allows (R32), and a next step made ready by a result is claimed without waiting for a
 * poll: the result holds its slot, and the settle statement leases the step to the worker at
 * once (chained).
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

/**
 * Polls until every workflow of `ids` succeeded; returns the most tasks seen leased at once,
 * per queue (the bound is per queue: each has its own pool).
 */
async function mostLeasedUntilSucceeded(
  url: string,
  ids: readonly string[],
): Promise<Map<string, number>> {
  const mostLeased = new Map<string, number>();
  await waitFor(
    async () => {
      const leased = await query<{ queue: string; n: number }>(
        url,
        `select queue, count(*)::int as n from causeway_tasks where state = 'leased' group by queue`,
      );
      for (const row of leased) {
        mostLeased.set(row.queue, Math.max(mostLeased.get(row.queue) ?? 0, row.n));
      }
      const done = await query<{ n: number }>(
        url,
        `select count(*)::int as n from causeway_workflows where id = any($1::uuid[]) and state = 'succeeded'`,
        [ids],
      );
      return done[0]?.n === ids.length;
    },
    { timeoutMs: 20_000, intervalMs: 2, description: 'every workflow succeeded' },
  );
  return mostLeased;
}

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

  it('claims a next step made ready by a result without waiting for a poll', async () => {
    // Polling is off in practice (60 s): a next step left to the poll would stall its chain.
    const engine = testEngine(database().url, { workflows: [chain], pollIntervalMs: 60_000 });
    await engine.migrate();
    const worker = await engine.startWorker({ concurrency: 1 });
    const ids: string[] = [];
    for (let run = 0; run < 10; run += 1) {
      const { workflow } = await engine.submit('pipeline-chain', {});
      ids.push(workflow.id);
      await waitFor(async () => (await engine.getWorkflow(workflow.id))?.state === 'succeeded', {
        timeoutMs: 15_000,
        description: `chain ${run} succeeded without polling`,
      });
    }
    await worker.stop();
    const claims = await query<{ n: number }>(
      database().url,
      `select count(*)::int as n from causeway_transitions
        where workflow_id = any($1::uuid[]) and reason = 'lease_acquired' and task_id is not null`,
      [ids],
    );
    expect(claims[0]?.n).toBe(30);
    // Each of b and c was leased by the statement that wrote its upstream's success: the
    // success, the promotion and the claim share one transaction.
    const chained = await chainedLeases(database().url, ids);
    expect(chained).toEqual([
      { step: 'b', n: 10 },
      { step: 'c', n: 10 },
    ]);
    expect(await logMismatches(database().url)).toEqual([]);
  });

  it.each([
    {
      queues: 'one queue',
      otherQueue: null,
      concurrency: { default: 2 } as Record<string, number>,
      prefetch: 3,
      // A result holds the slot its handler freed for the next step of its own queue, even
      // while the prefetched tasks fill the pool: every b and c is chained.
      everyNextChained: true,
    },
    {
      // Many results of a wide pool make steps ready for a narrow one: each may hold a slot
      // there only while one is free.
      queues: 'b on a second, narrow queue',
      otherQueue: 'pipeline-other',
      concurrency: { default: 6, 'pipeline-other': 1 } as Record<string, number>,
      prefetch: 0,
      everyNextChained: false,
    },
  ])(
    'keeps the pool and lease bounds while steps are chained ($queues)',
    async ({ otherQueue, concurrency, prefetch, everyNextChained }) => {
      const runningIn = new Map<string, number>();
      const mostRunningIn = new Map<string, number>();
      const counted = defineWorkflow({
        name: `pipeline-counted-chain-${otherQueue ?? 'default'}`,
        input: z.object({ i: z.number().int() }),
        steps: Object.fromEntries(
          ['a', 'b', 'c'].map((name, index, names) => {
            const queue = name === 'b' && otherQueue !== null ? otherQueue : 'default';
            return [
              name,
              step<{ i: number }>({
                queue,
                ...(index === 0 ? {} : { after: [names[index - 1] as string] }),
                run: async (ctx) => {
                  runningIn.set(queue, (runningIn.get(queue) ?? 0) + 1);
                  mostRunningIn.set(
                    queue,
                    Math.max(mostRunningIn.get(queue) ?? 0, runningIn.get(queue) ?? 0),
                  );
                  await new Promise((resolve) => setTimeout(resolve, (ctx.input.i + index) % 3));
                  runningIn.set(queue, (runningIn.get(queue) ?? 1) - 1);
                  // Each step extends its upstream's output: a chained step must be handed it.
                  const upstream =
                    index === 0 ? `${ctx.input.i}:` : ctx.results[names[index - 1] as string];
                  return `${upstream}${name}`;
                },
              }),
            ];
          }),
        ),
      });
      const engine = testEngine(database().url, { workflows: [counted] });
      await engine.migrate();
      const n = 60;
      const submitted = await engine.submitMany(
        Array.from({ length: n }, (_, i) => ({ name: counted.name, input: { i } })),
      );
      const ids = submitted.map((result) => result.workflow.id);
      const worker = await engine.startWorker({ concurrency, prefetch });
      const mostLeased = await mostLeasedUntilSucceeded(database().url, ids);
      await worker.stop();
      // R32 per queue: no queue ran more than its pool; leases within the pool, the prefetch
      // and the larger of the two for results being written.
      for (const [queue, limit] of Object.entries(concurrency)) {
        expect(mostRunningIn.get(queue), queue).toBeLessThanOrEqual(limit);
        expect(mostLeased.get(queue) ?? 0, queue).toBeLessThanOrEqual(
          limit + prefetch + Math.max(limit, prefetch),
        );
      }
      expect(mostRunningIn.get('default')).toBe(concurrency.default);
      // Every step ran once, and got its upstream step's output.
      const tasks = await query<{ step: string; attempt: number; output: string; input: number }>(
        database().url,
        `select t.step, t.attempt, t.output #>> '{}' as output, (w.input ->> 'i')::int as input
         from causeway_tasks t join causeway_workflows w on w.id = t.workflow_id
        where t.workflow_id = any($1::uuid[])`,
        [ids],
      );
      expect(tasks).toHaveLength(3 * n);
      const expected: Record<string, string> = { a: 'a', b: 'ab', c: 'abc' };
      for (const task of tasks) {
        expect(task.attempt).toBe(1);
        expect(task.output).toBe(`${task.input}:${expected[task.step]}`);
      }
      const chained = await chainedLeases(database().url, ids);
      if (everyNextChained) {
        expect(chained).toEqual([
          { step: 'b', n },
          { step: 'c', n },
        ]);
      } else {
        expect(chained.reduce((sum, row) => sum + row.n, 0)).toBeGreaterThan(0);
      }
      expect(await logMismatches(database().url)).toEqual([]);
    },
  );

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
      // Leases held at once: running + prefetched + results still being written (at most the
      // larger of a pool and the prefetch).
      const mostLeased = Math.max(
        0,
        ...(await mostLeasedUntilSucceeded(database().url, ids)).values(),
      );
      await worker.stop();
      expect(mostRunning).toBe(concurrency);
      expect(mostLeased).toBeGreaterThan(0);
      expect(mostLeased).toBeLessThanOrEqual(
        concurrency + prefetch + Math.max(concurrency, prefetch),
      );
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

  /** The most tasks one claim leased: a claim is one statement, so one transaction id. */
  async function largestClaim(url: string, ids: readonly string[]): Promise<number> {
    const rows = await query<{ n: number }>(
      url,
      `select coalesce(max(n), 0)::int as n from (
         select count(*) as n from causeway_transitions
          where workflow_id = any($1::uuid[]) and reason = 'lease_acquired' and task_id is not null
          group by xmin::text) as claims`,
      [ids],
    );
    return rows[0]?.n ?? 0;
  }

  it.each([
    { handlerMs: 0, expectPrefetch: true },
    { handlerMs: 40, expectPrefetch: false },
  ])(
    'by default prefetches beyond the pool only while handlers are fast (handlers of $handlerMs ms)',
    async ({ handlerMs, expectPrefetch }) => {
      const url = database().url;
      const paced = defineWorkflow({
        name: `pipeline-paced-${handlerMs}`,
        input: z.object({ i: z.number().int() }),
        steps: {
          only: step<{ i: number }>({
            run: async (ctx) => {
              if (handlerMs > 0) await new Promise((resolve) => setTimeout(resolve, handlerMs));
              return ctx.input.i;
            },
          }),
        },
      });
      const engine = testEngine(url, { workflows: [paced] });
      await engine.migrate();
      const n = expectPrefetch ? 400 : 40;
      const submitted = await engine.submitMany(
        Array.from({ length: n }, (_, i) => ({ name: paced.name, input: { i } })),
      );
      const ids = submitted.map((result) => result.workflow.id);
      const concurrency = 2;
      const worker = await engine.startWorker({ concurrency });
      await waitFor(
        async () => {
          const done = await query<{ n: number }>(
            url,
            `select count(*)::int as n from causeway_workflows
              where id = any($1::uuid[]) and state = 'succeeded'`,
            [ids],
          );
          return done[0]?.n === n;
        },
        { timeoutMs: 20_000, description: 'every paced workflow succeeded' },
      );
      await worker.stop();
      const largest = await largestClaim(url, ids);
      if (expectPrefetch) expect(largest).toBeGreaterThan(concurrency);
      else expect(largest).toBeLessThanOrEqual(concurrency);
      expect(await logMismatches(url)).toEqual([]);
    },
  );
});
