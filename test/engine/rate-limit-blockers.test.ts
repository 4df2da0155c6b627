/**
 * R51: the blocker `rate_limited`, read on a real database. A due task whose key's window is
 * spent names the limit, what the last period spent and the next slot, one period after the
 * grant on the database clock; a key paused by a step that heard "too busy" names the task
 * that paused it, its workflow and why; a key with room is no rate blocker. A reader that does
 * not declare the limit (the API's) still says until when the last claim left the key blocked.
 * `explain` tells the same: the throttled retry paused the key; the held task's note.
 */
import type { Engine } from '@causeway/engine';
import { defineWorkflow, rateLimit, StepError, step } from '@causeway/workflow';
import { workflowRegistry } from '@causeway/workflow/internal';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readBlockers } from '../../packages/engine/src/runtime/blockers/workflow-blockers';
import { claimReadyTasks } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

const database = useTestDatabase();
const url = () => database().url;

const input = z.object({ account: z.string(), n: z.number().int() });
type Input = z.output<typeof input>;

const rateLimits = [rateLimit({ name: 'platform', limit: 2, periodMs: 60_000 })];

const posting = defineWorkflow({
  name: 'rate-blocked-post',
  input,
  steps: {
    post: step<Input>({
      queue: 'q-rate-blocked',
      maxAttempts: 1,
      rateLimit: { name: 'platform', key: (ctx) => ctx.input.account },
      run: () => null,
    }),
  },
});
const throttled = defineWorkflow({
  name: 'rate-blocked-429',
  input,
  steps: {
    post: step<Input>({
      queue: 'q-rate-blocked-429',
      maxAttempts: 3,
      rateLimit: { name: 'platform', key: (ctx) => ctx.input.account },
      run: () => {
        throw new StepError('throttled', 'HTTP 429 from the platform', { retryAfterMs: 30_000 });
      },
    }),
  },
});
const workflows = [posting, throttled];
const definitions = workflowRegistry(workflows);
const engine = (): Engine => testEngine(url(), { workflows, rateLimits });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

async function submitPosts(cw: Engine, name: string, account: string, count: number) {
  const submitted = await cw.submitMany(
    Array.from({ length: count }, (_, n) => ({ name, input: { account, n } })),
  );
  return submitted.map((result) => result.workflow.id);
}

describe('the blocker rate_limited (R51)', () => {
  it('a spent key: the limit, the spend of the last minute and the next slot a minute after the grant', async () => {
    const cw = engine();
    try {
      const ids = await submitPosts(cw, 'rate-blocked-post', 'acme', 3);
      const claimed = await claimReadyTasks(
        cw.db,
        { definitions, leaseMs: 30_000, random: Math.random, rateLimits },
        { queue: 'q-rate-blocked', limit: 2, holder: cw.holder },
      );
      expect(claimed.claimed).toHaveLength(2);
      const leased = new Set(claimed.claimed.map((entry) => entry.task.workflowId));
      const third = ids.find((id) => !leased.has(id)) as string;
      const [grant] = await query<{ at: Date }>(
        url(),
        `select max(at) as at from causeway_transitions
         where reason = 'lease_acquired' and workflow_id = any($1::uuid[])`,
        [[...leased]],
      );
      if (grant === undefined) throw new Error('no grant in the log');
      const nextSlot = new Date(grant.at.getTime() + 60_000);
      const [blocker] = (await cw.blockers(third)) ?? [];
      expect(blocker?.code).toBe('rate_limited');
      expect(blocker?.until).toEqual(nextSlot);
      expect(blocker?.facts).toMatchObject({
        name: 'platform',
        key: 'acme',
        cost: 1,
        limit: 2,
        periodMs: 60_000,
        spent: 2,
        nextSlotAt: nextSlot.toISOString(),
        pausedUntil: null,
      });
      expect(blocker?.message).toMatch(
        new RegExp(
          `^post: due since \\d\\d:\\d\\d:\\d\\d, but rate limit platform \\(2 per 1 min\\) for key "acme" is spent: 2 in the last 1 min; next slot ${nextSlot.toISOString().slice(11, 19)}$`,
        ),
      );
      expect((await cw.explain(third)).text).toContain(
        `post: held: rate limit platform (2 per 1 min) for key "acme" is spent: 2 in the last 1 min; next slot ${nextSlot.toISOString().slice(11, 19)}`,
      );
      // A reader that does not declare the limit says how long the last claim blocked the key.
      const [unlimited] = (await readBlockers(cw.db, definitions, [third])).get(third) ?? [];
      expect(unlimited?.code).toBe('rate_limited');
      expect(unlimited?.facts).toMatchObject({ limit: null, spent: null });
      expect(unlimited?.message).toContain('this process does not declare the limit');
      // Another key of the same limit has room: no rate blocker.
      const [other] = await submitPosts(cw, 'rate-blocked-post', 'globex', 1);
      const [room] = (await cw.blockers(other as string)) ?? [];
      expect(room?.code).toBe('no_worker');
    } finally {
      await cw.close();
    }
  });

  it('a paused key: until when, the task and workflow that paused it, and why', async () => {
    const cw = engine();
    try {
      const [pausing] = await submitPosts(cw, 'rate-blocked-429', 'initech', 1);
      await cw.startWorker({ queues: ['q-rate-blocked-429'], concurrency: 1 });
      const paused = await waitFor(
        async () =>
          (
            await query<{ until: Date; by: string }>(
              url(),
              `select paused_until as until, paused_by_task::text as by
               from causeway_rate_windows
               where name = 'platform' and key = 'initech' and paused_until is not null`,
            )
          )[0],
        { description: 'the key paused' },
      );
      const [waiting] = await submitPosts(cw, 'rate-blocked-post', 'initech', 1);
      const [blocker] = (await cw.blockers(waiting as string)) ?? [];
      expect(blocker?.code).toBe('rate_limited');
      expect(blocker?.until).toEqual(paused.until);
      expect(blocker?.facts).toMatchObject({
        key: 'initech',
        spent: 1,
        pausedUntil: paused.until.toISOString(),
        pausedByTask: paused.by,
        pausedByWorkflow: pausing,
        pausedReason: 'HTTP 429 from the platform',
      });
      expect(blocker?.message).toMatch(
        new RegExp(
          `^post: due since \\d\\d:\\d\\d:\\d\\d, but rate limit platform for key "initech" is paused until ${paused.until.toISOString().slice(11, 19)} by task ${paused.by} of workflow ${pausing}: HTTP 429 from the platform$`,
        ),
      );
      // The task that heard it waits for its own retry, at the same time.
      const [own] = (await cw.blockers(pausing as string)) ?? [];
      expect(own?.code).toBe('not_due');
      expect(own?.until).toEqual(paused.until);
      // explain: the throttled retry says it paused the key for everyone; the held task says
      // what holds it, in its blocker's words.
      const until = paused.until.toISOString().slice(11, 19);
      expect((await cw.explain(pausing as string)).text).toContain(
        `retry at ${until}: throttled, the step asked to wait 30 s; rate limit platform for key "initech" paused for every task until ${until}`,
      );
      expect((await cw.explain(waiting as string)).text).toContain(
        `post: held: rate limit platform for key "initech" is paused until ${until} by task ${paused.by} of workflow ${pausing}: HTTP 429 from the platform`,
      );
    } finally {
      await cw.close();
    }
  }, 30_000);
});
