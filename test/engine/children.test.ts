/**
 * R43–R47: a step's `run` returns `startChildren(...)`; the children are written with the step's
 * edge, run as ordinary workflows, and settle the step by fixed rules. Real engine, real
 * PostgreSQL, real workers.
 */

import { workflow } from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { type Engine, startChild, startChildren } from './children-support';

const database = useTestDatabase();
const url = () => database().url;

/** A child that doubles its number; a number in `failing` fails for good; 99 waits for an event. */
const failing = new Set<number>();
const double = workflow({ name: 'kids-double', input: z.object({ n: z.number() }) })
  .step('work', {
    queue: 'q-kids',
    maxAttempts: 1,
    run: (ctx) => {
      if (failing.has(ctx.input.n)) throw new Error(`cannot double ${ctx.input.n}`);
      return ctx.input.n * 2;
    },
  })
  .build();
const slow = workflow({ name: 'kids-slow', input: z.object({ n: z.number() }) })
  .event('hold', { name: 'kids.release', key: (ctx) => String(ctx.input.n), timeoutMs: 600_000 })
  .build();

const parent = workflow({ name: 'kids-parent', input: z.object({ ns: z.array(z.number()) }) })
  .step('fan', {
    queue: 'q-kids',
    run: (ctx) =>
      startChildren(
        double,
        ctx.input.ns.map((n) => ({ n })),
      ),
  })
  .step('sum', {
    after: ['fan'],
    queue: 'q-kids',
    run: (ctx) => (ctx.results.fan as number[]).reduce((a, b) => a + b, 0),
  })
  .build();

const workflows = [double, slow, parent];
const engine = () => testEngine(url(), { workflows });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

async function finished(app: Engine, id: string) {
  return waitFor(
    async () => {
      const found = await app.getWorkflow(id);
      return found != null && ['succeeded', 'dead', 'cancelled'].includes(found.state)
        ? found
        : undefined;
    },
    { timeoutMs: 15_000 },
  );
}

describe('startChildren', () => {
  it('runs one child per input and gives the step their results in input order', async () => {
    const app = engine();
    const worker = await app.startWorker({ queues: ['q-kids'], concurrency: 4 });
    const { workflow: submitted } = await app.submit('kids-parent', { ns: [1, 2, 3] });
    const done = await finished(app, submitted.id);
    await worker.stop();
    expect(done.state).toBe('succeeded');
    const fan = done.tasks.find((task) => task.step === 'fan');
    const sum = done.tasks.find((task) => task.step === 'sum');
    expect(fan?.output).toEqual([2, 4, 6]);
    expect(sum?.output).toBe(12);
    expect(fan?.transitions.map((row) => `${row.from}→${row.to} ${row.reason}`)).toEqual([
      'null→pending submitted'.replace('pending', 'queued'),
      'queued→leased lease_acquired',
      'leased→awaiting_children children_started',
      'awaiting_children→succeeded children_succeeded',
    ]);
    const children = await query<{
      id: string;
      parent_task_id: string;
      child_index: number;
      root_workflow_id: string;
      depth: number;
      state: string;
    }>(
      url(),
      `select id, parent_task_id, child_index, root_workflow_id, depth, state
         from causeway_workflows where parent_workflow_id = $1 order by child_index`,
      [submitted.id],
    );
    expect(
      children.map((row) => [
        row.child_index,
        row.parent_task_id,
        row.root_workflow_id,
        row.depth,
        row.state,
      ]),
    ).toEqual([
      [0, fan?.id, submitted.id, 1, 'succeeded'],
      [1, fan?.id, submitted.id, 1, 'succeeded'],
      [2, fan?.id, submitted.id, 1, 'succeeded'],
    ]);
    expect(await logMismatches(url())).toEqual([]);
  });
});
