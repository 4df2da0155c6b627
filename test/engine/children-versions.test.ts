/**
 * R45 with R54: a child's last edge decided by an engine that does not define its parent's
 * workflow moves the parent step's tally but cannot settle the step; the sweeper of an engine
 * that defines it does, within a sweep interval. Two engines, real workers, real PostgreSQL.
 */
import { startChildren, workflow } from '@causeway/workflow/internal';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

const database = useTestDatabase();
const url = () => database().url;

const leaf = workflow({ name: 'versions-leaf', input: z.object({ n: z.number() }) })
  .step('work', { queue: 'q-leaf', run: (ctx) => ctx.input.n + 1 })
  .build();
const root = workflow({ name: 'versions-root', input: z.object({}) })
  .step('fan', { queue: 'q-root', run: () => startChildren(leaf, [{ n: 1 }, { n: 2 }]) })
  .build();

beforeAll(async () => {
  const setup = testEngine(url(), { workflows: [leaf, root] });
  await setup.migrate();
  await setup.close();
});

describe('a child decided by an engine that does not define its parent', () => {
  it('moves the tally there, and the parent engine’s sweeper settles the step', async () => {
    const parentEngine = testEngine(url(), { workflows: [leaf, root], sweepIntervalMs: 100 });
    const childEngine = testEngine(url(), { workflows: [leaf], sweepIntervalMs: 100 });
    const parents = await parentEngine.startWorker({ queues: ['q-root'], concurrency: 1 });
    const children = await childEngine.startWorker({ queues: ['q-leaf'], concurrency: 2 });
    const { workflow: submitted } = await parentEngine.submit('versions-root', {});
    const done = await waitFor(
      async () => {
        const found = await parentEngine.getWorkflow(submitted.id);
        return found?.state === 'succeeded' && found;
      },
      { timeoutMs: 10_000 },
    );
    await Promise.all([parents.stop(), children.stop()]);
    const fan = done.tasks[0];
    expect(fan?.output).toEqual([2, 3]);
    // The child engine wrote the children's edges; the step's settle is the sweeper's pass.
    const [row] = await query<{ children_succeeded: number; settled_after: boolean }>(
      url(),
      `select t.children_succeeded,
          (select max(l.at) from causeway_transitions l where l.task_id = t.id) >
          (select max(l.at) from causeway_transitions l join causeway_workflows w on w.id = l.workflow_id
            where w.parent_task_id = t.id) as settled_after
         from causeway_tasks t where t.id = $1`,
      [fan?.id],
    );
    expect(row).toEqual({ children_succeeded: 2, settled_after: true });
    expect(await logMismatches(url())).toEqual([]);
  });
});
