/**
 * Rate-limited work for the R51 surfaces' tests: a keyed limit of 3 a minute that claims
 * through `claimReadyTasks` fill (acme spends all 3, bolt 1), a step that hears "HTTP 429"
 * and pauses its key (zed) for 30 s, and a declared limit nothing spends.
 */
import type { Engine } from '@causeway/engine';
import { defineWorkflow, rateLimit, StepError, step } from '@causeway/workflow';
import { z } from 'zod';
import { claimReadyTasks } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import { query } from './engine';
import { waitFor } from './wait-for';

const input = z.object({ account: z.string(), n: z.number().int() });
type Input = z.output<typeof input>;

export const rateQueue = 'q-rate-surface';
export const throttleQueue = 'q-rate-surface-429';

export const rateLimits = [
  rateLimit({ name: 'posts', limit: 3, periodMs: 60_000 }),
  rateLimit({ name: 'exports', limit: 100, periodMs: 3_600_000 }),
];

export const posting = defineWorkflow({
  name: 'rate-surface-post',
  input,
  steps: {
    post: step<Input>({
      queue: rateQueue,
      rateLimit: { name: 'posts', key: (ctx) => ctx.input.account },
      run: () => null,
    }),
  },
});

export const throttled = defineWorkflow({
  name: 'rate-surface-429',
  input,
  steps: {
    post: step<Input>({
      queue: throttleQueue,
      maxAttempts: 3,
      rateLimit: { name: 'posts', key: (ctx) => ctx.input.account },
      run: () => {
        throw new StepError('throttled', 'HTTP 429', { retryAfterMs: 30_000 });
      },
    }),
  },
});

export const exporting = defineWorkflow({
  name: 'rate-surface-export',
  input,
  steps: {
    run: step<Input>({ queue: 'q-rate-export', rateLimit: { name: 'exports' }, run: () => null }),
  },
});

export const rateWorkflows = [posting, throttled, exporting];

/**
 * Five posts of acme and one of bolt claimed (acme spends its 3, bolt 1), and zed paused by
 * a worker's throttled step; answers zed's task and workflow.
 */
export async function fillRateLimits(
  cw: Engine,
  databaseUrl: string,
): Promise<{ pausedTask: string; pausedWorkflow: string }> {
  await cw.submitMany(
    ['acme', 'acme', 'acme', 'acme', 'acme', 'bolt'].map((account, n) => ({
      name: posting.name,
      input: { account, n },
    })),
  );
  const apply = {
    definitions: cw.definitions,
    leaseMs: 30_000,
    random: Math.random,
    rateLimits,
  };
  await claimReadyTasks(cw.db, apply, { queue: rateQueue, limit: 20, holder: cw.holder });
  const [paused] = await cw.submitMany([{ name: throttled.name, input: { account: 'zed', n: 0 } }]);
  const worker = await cw.startWorker({ queues: [throttleQueue], concurrency: 1 });
  const pausedTask = async () =>
    (
      await query<{ task: string }>(
        databaseUrl,
        `select paused_by_task::text as task from causeway_rate_windows
         where name = 'posts' and key = 'zed' and paused_until is not null`,
      )
    )[0]?.task;
  await waitFor(async () => (await pausedTask()) !== undefined, { description: 'zed paused' });
  await worker.stop();
  return {
    pausedTask: (await pausedTask()) as string,
    pausedWorkflow: paused?.workflow.id as string,
  };
}
