/**
 * A wide fan-out drained by two engines at once (R43, R45): their results for sibling children
 * race for the step's tally (counted in the one-statement settle while a child stays open, in
 * the full decision for the one that settles it). Every child is counted exactly once, the
 * step settles once, after the last, with every child's result in input order. Real engines,
 * real PostgreSQL.
 */
import { workflow } from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { startChildren } from './children-support';

const database = useTestDatabase();
const url = () => database().url;
const width = 400;

const triple = workflow({ name: 'wide-triple', input: z.object({ n: z.number() }) })
  .step('work', { queue: 'q-wide', run: (ctx) => ctx.input.n * 3 })
  .build();
const wide = workflow({ name: 'wide-parent', input: z.object({ width: z.number() }) })
  .step('fan', {
    queue: 'q-wide',
    run: (ctx) =>
      startChildren(
        triple,
        Array.from({ length: ctx.input.width }, (_, n) => ({ n })),
      ),
  })
  .build();
const engine = () => testEngine(url(), { workflows: [triple, wide] });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

describe('a wide fan-out drained by two engines', () => {
  it('counts every child once and settles the step once, after the last', async () => {
    const engines = [engine(), engine()];
    const workers = await Promise.all(
      engines.map((app) => app.startWorker({ queues: ['q-wide'], concurrency: 10 })),
    );
    const first = engines[0] as (typeof engines)[number];
    const { workflow: submitted } = await first.submit('wide-parent', { width });
    const done = await waitFor(
      async () => {
        const found = await first.getWorkflow(submitted.id);
        return found?.state === 'succeeded' || found?.state === 'dead' ? found : undefined;
      },
      { timeoutMs: 15_000 },
    );
    await Promise.all(workers.map((worker) => worker.stop()));
    await Promise.all(engines.map((app) => app.close()));
    expect(done.state).toBe('succeeded');
    const fan = done.tasks.find((task) => task.step === 'fan');
    expect(fan?.output).toEqual(Array.from({ length: width }, (_, n) => n * 3));
    const [tally] = await query<{ total: number; succeeded: number; failed: number }>(
      url(),
      `select children_total as total, children_succeeded as succeeded, children_failed as failed
         from causeway_tasks where id = $1`,
      [fan?.id],
    );
    expect(tally).toEqual({ total: width, succeeded: width, failed: 0 });
    const edges = await query<{ reason: string; count: number }>(
      url(),
      `select reason, count(*)::int as count from causeway_transitions
        where task_id = $1 group by reason order by reason`,
      [fan?.id],
    );
    expect(edges).toEqual([
      { reason: 'children_started', count: 1 },
      { reason: 'children_succeeded', count: 1 },
      { reason: 'lease_acquired', count: 1 },
      { reason: 'submitted', count: 1 },
    ]);
    // The step settled after every child had ended: no child's end comes after its edge.
    const [order] = await query<{ later: number }>(
      url(),
      `select count(*)::int as later from causeway_transitions as child
        where child.workflow_id in (select id from causeway_workflows where parent_task_id = $1)
          and child.task_id is not null and child.to_state = 'succeeded'
          and child.id > (select id from causeway_transitions
            where task_id = $1 and reason = 'children_succeeded')`,
      [fan?.id],
    );
    expect(order).toEqual({ later: 0 });
    expect(await logMismatches(url())).toEqual([]);
  }, 30_000);
});
