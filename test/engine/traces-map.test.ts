/**
 * Traces (R57) of a map step's children (R44): the engine starts them, not an attempt, so each
 * stores its parent workflow's trace context and their first attempts sit in the trace of the
 * parent's submit, under its span, beside the parent's own steps. A map step that runs first
 * starts its children in the submit's transaction; one after a step, in the decision on that
 * step's result. The SDK is registered as an application does; real PostgreSQL, real workers.
 */
import { workflow } from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { testEngine } from '../helpers/engine';
import {
  childWorkflowIds,
  registerTestTracing,
  stepSpans,
  storedContext,
  submittedInSpan,
  traceparentOf,
  workflowIn,
} from './traces-support';

const database = useTestDatabase();
const url = () => database().url;
const tracing = registerTestTracing();

const resize = workflow({ name: 'traces-resize', input: z.object({ image: z.string() }) })
  .step('resize', { queue: 'q-map', run: (ctx) => `${ctx.input.image}@2x` })
  .build();
/** A map step after a step: its children start when the scan's result is decided. */
const upload = workflow({ name: 'traces-upload', input: z.object({ images: z.array(z.string()) }) })
  .step('scan', { queue: 'q-map', run: (ctx) => ({ found: ctx.input.images }) })
  .map('each', {
    after: ['scan'],
    over: (ctx) => ctx.results.scan.found,
    workflow: resize,
    input: (image) => ({ image }),
  })
  .step('report', { after: ['each'], queue: 'q-map', run: (ctx) => ctx.results.each.length })
  .build();
/** A map step first: its children start in the submit's transaction. */
const shout = workflow({ name: 'traces-shout', input: z.object({ words: z.array(z.string()) }) })
  .map('loud', {
    over: (ctx) => ctx.input.words,
    queue: 'q-map',
    inputSchema: z.string(),
    run: (ctx) => ctx.input.toUpperCase(),
  })
  .build();
/** Whether the list of `traces-listed` throws: its map step fails until a replay. */
let listFails = true;
const listed = workflow({ name: 'traces-listed', input: z.object({ words: z.array(z.string()) }) })
  .map('loud', {
    over: (ctx) => {
      if (listFails) throw new Error('the list is not there yet');
      return ctx.input.words;
    },
    queue: 'q-map',
    inputSchema: z.string(),
    run: (ctx) => ctx.input.toUpperCase(),
  })
  .build();
const engine = () => testEngine(url(), { workflows: [resize, upload, shout, listed] });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

describe('a map step in a traced workflow (R44, R57)', () => {
  it('stores the parent’s context on each child; their first attempts sit under the submit', async () => {
    const app = engine();
    const { submit, id } = await submittedInSpan(tracing, app, 'traces-upload', {
      images: ['a.png', 'b.png', 'c.png'],
    });
    const worker = await app.startWorker({ queues: ['q-map'], concurrency: 4 });
    await workflowIn(app, id, 'succeeded');
    const children = await childWorkflowIds(url(), id);
    expect(children).toHaveLength(3);
    const childSpans = await Promise.all(
      children.map(async (child) => (await stepSpans(tracing, child, 1))[0]),
    );
    const parentSpans = await stepSpans(tracing, id, 2);
    await worker.stop();
    const parentContext = await storedContext(url(), id);
    expect(parentContext).toEqual({ traceparent: traceparentOf(submit) });
    for (const child of children) expect(await storedContext(url(), child)).toEqual(parentContext);
    for (const span of [...childSpans, ...parentSpans]) {
      expect(span?.spanContext().traceId).toBe(submit.spanContext().traceId);
      expect(span?.parentSpanContext?.spanId).toBe(submit.spanContext().spanId);
    }
    expect(childSpans.map((span) => span?.attributes['causeway.step'])).toEqual([
      'resize',
      'resize',
      'resize',
    ]);
    expect(childSpans.map((span) => span?.attributes['causeway.reason'])).toEqual([
      'completed',
      'completed',
      'completed',
    ]);
  });

  it('a first map step’s children, started with the submit, store its context too', async () => {
    const app = engine();
    const { submit, id } = await submittedInSpan(tracing, app, 'traces-shout', {
      words: ['hi', 'yo'],
    });
    const children = await childWorkflowIds(url(), id);
    expect(children).toHaveLength(2);
    for (const child of children) {
      expect(await storedContext(url(), child)).toEqual({ traceparent: traceparentOf(submit) });
    }
    const worker = await app.startWorker({ queues: ['q-map'], concurrency: 2 });
    await workflowIn(app, id, 'succeeded');
    const childSpans = await Promise.all(
      children.map(async (child) => (await stepSpans(tracing, child, 1))[0]),
    );
    await worker.stop();
    for (const span of childSpans) {
      expect(span?.parentSpanContext?.spanId).toBe(submit.spanContext().spanId);
    }
  });

  it('a map step of a workflow submitted outside any span gives its children none', async () => {
    const app = engine();
    const { workflow: submitted } = await app.submit('traces-shout', { words: ['hey'] });
    const children = await childWorkflowIds(url(), submitted.id);
    expect(children).toHaveLength(1);
    for (const child of children) expect(await storedContext(url(), child)).toBeNull();
  });

  it('a replayed map step’s children store none: a replay starts traces of its own', async () => {
    const app = engine();
    const { id } = await submittedInSpan(tracing, app, 'traces-listed', { words: ['a', 'b'] });
    const dead = await workflowIn(app, id, 'dead');
    const step = dead.tasks.find((task) => task.step === 'loud');
    expect(step?.state).toBe('dead');
    expect(await childWorkflowIds(url(), id)).toEqual([]);
    listFails = false;
    await tracing.inSpan('operator replays', () =>
      app.replayTask(step?.id as string, { operator: 'ops', reason: 'the list is there now' }),
    );
    const children = await childWorkflowIds(url(), id);
    expect(children).toHaveLength(2);
    for (const child of children) expect(await storedContext(url(), child)).toBeNull();
  });
});
