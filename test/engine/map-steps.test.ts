/**
 * R44: a map step runs no code; once its upstream steps succeeded it starts one child per
 * element of its list, in the promotion's transaction (a first map step: in the submit's),
 * and its output is the children's results in input order. Real engine, real PostgreSQL.
 */

import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { finished, workflow } from './children-support';

const database = useTestDatabase();
const url = () => database().url;

const resize = workflow({
  name: 'maps-resize',
  input: z.object({ image: z.string(), width: z.number() }),
})
  .step('resize', {
    queue: 'q-maps',
    run: (ctx) => {
      if (ctx.input.image === 'broken.png') throw new Error('cannot decode broken.png');
      return `${ctx.input.image}@${ctx.input.width}`;
    },
    maxAttempts: 1,
  })
  .build();

const upload = workflow({
  name: 'maps-upload',
  input: z.object({
    images: z.array(z.string()),
    width: z.number(),
    failAt: z.number().optional(),
  }),
})
  .step('scan', { queue: 'q-maps', run: (ctx) => ({ found: ctx.input.images }) })
  .map('each', {
    after: ['scan'],
    over: (ctx) => ctx.results.scan.found,
    workflow: resize,
    input: (image, index, ctx) => {
      if (index === ctx.input.failAt) throw new Error(`no input for ${image}`);
      return { image, width: ctx.input.width };
    },
    tolerate: { failures: 1 },
  })
  .step('report', {
    after: ['each'],
    queue: 'q-maps',
    run: (ctx) => ctx.results.each.map((outcome) => outcome.state),
  })
  .build();

/** A first map step over the input, with one-step children made from `run`. */
const shout = workflow({ name: 'maps-shout', input: z.object({ words: z.array(z.string()) }) })
  .map('loud', {
    over: (ctx) => ctx.input.words,
    queue: 'q-maps',
    inputSchema: z.string(),
    run: (ctx) => ctx.input.toUpperCase(),
  })
  .build();

const workflows = [resize, upload, shout];
const engine = () => testEngine(url(), { workflows });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

describe('map steps', () => {
  it('start one child per element after their upstream steps and give the outcomes in order', async () => {
    const app = engine();
    const worker = await app.startWorker({ queues: ['q-maps'], concurrency: 4 });
    const { workflow: submitted } = await app.submit('maps-upload', {
      images: ['a.png', 'broken.png', 'c.png'],
      width: 64,
    });
    const done = await finished(app, submitted.id);
    await worker.stop();
    expect(done.state).toBe('succeeded');
    const each = done.tasks.find((task) => task.step === 'each');
    expect(each?.transitions.map((row) => `${row.from}→${row.to} ${row.reason}`)).toEqual([
      'null→pending submitted',
      'pending→awaiting_children children_started',
      'awaiting_children→succeeded children_succeeded',
    ]);
    expect(
      (each?.output as { state: string; result?: string }[] | undefined)?.map(
        ({ state, result }) => [state, result],
      ),
    ).toEqual([
      ['succeeded', 'a.png@64'],
      ['dead', undefined],
      ['succeeded', 'c.png@64'],
    ]);
    expect(done.tasks.find((task) => task.step === 'report')?.output).toEqual([
      'succeeded',
      'dead',
      'succeeded',
    ]);
    expect(await logMismatches(url())).toEqual([]);
  });

  it('an input function that throws ends the step dead (step_input_failed) with no child written', async () => {
    const app = engine();
    const worker = await app.startWorker({ queues: ['q-maps'], concurrency: 4 });
    const { workflow: submitted } = await app.submit('maps-upload', {
      images: ['a.png', 'b.png'],
      width: 10,
      failAt: 1,
    });
    const done = await finished(app, submitted.id);
    await worker.stop();
    const each = done.tasks.find((task) => task.step === 'each');
    expect(each?.state).toBe('dead');
    expect(each?.transitions.at(-1)?.reason).toBe('step_input_failed');
    expect(each?.lastError).toBe('input threw for element 1: no input for b.png');
    expect(
      await query(url(), 'select id from causeway_workflows where parent_workflow_id = $1', [
        submitted.id,
      ]),
    ).toEqual([]);
  });

  it('an empty list succeeds at once with []', async () => {
    const app = engine();
    const worker = await app.startWorker({ queues: ['q-maps'], concurrency: 4 });
    const { workflow: submitted } = await app.submit('maps-upload', { images: [], width: 10 });
    const done = await finished(app, submitted.id);
    await worker.stop();
    expect(done.state).toBe('succeeded');
    expect(done.tasks.find((task) => task.step === 'each')?.output).toEqual([]);
    expect(done.tasks.find((task) => task.step === 'report')?.output).toEqual([]);
  });

  it('a first map step starts its one-step children in the submit, over the input', async () => {
    const app = engine();
    const { workflow: submitted } = await app.submit('maps-shout', { words: ['hi', 'there'] });
    // Started by the submit itself: no worker has run yet.
    const children = await query<{ name: string; state: string }>(
      url(),
      'select name, state from causeway_workflows where parent_workflow_id = $1 order by child_index',
      [submitted.id],
    );
    expect(children).toEqual([
      { name: 'maps-shout/loud', state: 'queued' },
      { name: 'maps-shout/loud', state: 'queued' },
    ]);
    const worker = await app.startWorker({ queues: ['q-maps'], concurrency: 4 });
    const done = await finished(app, submitted.id);
    await worker.stop();
    expect(done.tasks[0]?.output).toEqual(['HI', 'THERE']);
  });
});
