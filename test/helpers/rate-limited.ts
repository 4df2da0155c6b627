/**
 * Rate-limited work for the R51 surfaces' tests, done for real: claims through
 * `claimReadyTasks` fill a keyed limit of 3 a minute (acme spends all 3, bolt 1), and a
 * worker's step that hears "HTTP 429" pauses its key (zed) for 30 s.
 */
import type { Engine } from '@causeway/engine';
import { claimReadyTasks } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import { query } from './engine';
import { posting, rateLimits, rateQueue, throttled, throttleQueue } from './rate-limited-workflows';
import { waitFor } from './wait-for';

export {
  exporting,
  posting,
  rateLimits,
  rateQueue,
  rateWorkflows,
  throttled,
  throttleQueue,
} from './rate-limited-workflows';

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
