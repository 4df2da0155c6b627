/**
 * R50 with one concurrency group shared by steps on two queues: the key's slots are the
 * group's, whichever queue a task of the key is on, and a free slot never waits on another
 * queue's tasks.
 *
 * The key's rows are one per queue (migration 0030): claims walk their own queue's rows, and
 * a grant compares the versions of the key's rows on every queue.
 */
import type { Engine } from '@causeway/engine';
import { defineWorkflow, step } from '@causeway/workflow';
import { workflowRegistry } from '@causeway/workflow/internal';
import { type Kysely, sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { claimInFull } from '../../packages/engine/src/runtime/claim/claim-in-full';
import { claimReadyTasks } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import { useTestDatabase } from '../helpers/database';
import { testEngine } from '../helpers/engine';
import { rolledBack } from './stored-runs';

const database = useTestDatabase();
const url = () => database().url;

const input = z.object({ tenant: z.string() });
type Input = z.output<typeof input>;
const onQueue = (name: string, queue: string) =>
  defineWorkflow({
    name,
    input,
    steps: {
      only: step<Input>({
        queue,
        maxAttempts: 1,
        concurrency: { key: (ctx) => ctx.input.tenant, limit: 2, group: 'shared-tenants' },
        run: () => null,
      }),
    },
  });
const render = onQueue('shared-render', 'q-shared-render');
const publish = onQueue('shared-publish', 'q-shared-publish');
const workflows = [render, publish];
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

describe.each(paths)('a claim %s of a group shared by two queues (R50)', (path) => {
  it("takes a due task of a free key on its queue, whatever queue the key's latest task is on", async () => {
    const cw = engine();
    const claimed = await rolledBack(cw.db as Kysely<CausewayDatabase>, async (tx) => {
      // One task of the key to render, then one to publish: the key holds no slot.
      await cw.submit(render.name, { tenant: 'acme' }, { transaction: tx });
      await cw.submit(publish.name, { tenant: 'acme' }, { transaction: tx, delayMs: 1 });
      await sql`update causeway_clock set offset_ms = offset_ms + 60000`.execute(tx);
      const request = { queue: 'q-shared-render', limit: 5, holder: 'shared-host/1/boot' };
      const result =
        path === 'one statement'
          ? await claimReadyTasks(tx, apply(), request)
          : await claimInFull(tx, apply(), request);
      return result.claimed.map((task) => task.definition.name);
    });
    // Both of the key's slots are free: the render task is due and nothing holds it back.
    expect(claimed).toEqual([render.name]);
    await cw.close();
  });
});
