/**
 * Traces (R57), children and events: a child workflow started by a step stores the starting
 * attempt's span context, so a fan-out's children sit in the submit's trace under their
 * parent's attempt; an event sent in a span stores the sender's context, and the wait it
 * completes is recorded in the waiting workflow's trace, linked to the sender's span. The SDK
 * is registered as an application does; real PostgreSQL, real workers.
 */
import { schedule, startChildren, workflow } from '@causeway/workflow';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { scheduledWorkflows } from './fixtures/schedules';
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

const triple = workflow({ name: 'traces-triple', input: z.object({ n: z.number() }) })
  .step('work', { queue: 'q-tree', run: (ctx) => ctx.input.n * 3 })
  .build();
const fanOut = workflow({ name: 'traces-fan-out', input: z.object({ width: z.number() }) })
  .step('fan', {
    queue: 'q-tree',
    run: (ctx) =>
      startChildren(
        triple,
        Array.from({ length: ctx.input.width }, (_, n) => ({ n })),
      ),
  })
  .build();
const approval = workflow({ name: 'traces-approval', input: z.object({ noteId: z.string() }) })
  .event('approved', {
    name: 'note.approved',
    key: (ctx) => ctx.input.noteId,
    payload: z.object({ editor: z.string() }),
    timeoutMs: 3_600_000,
  })
  .step('publish', { after: ['approved'], queue: 'q-tree', run: () => 'published' })
  .build();

const everyMinute = schedule({
  name: 'traces-minute',
  workflow: triple,
  cron: '* * * * *',
  input: { n: 1 },
});
const engine = () =>
  testEngine(url(), { workflows: [triple, fanOut, approval], schedules: [everyMinute] });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

describe('a fan-out in a traced workflow (R57)', () => {
  it('stores the parent attempt’s context on each child; their spans sit under it', async () => {
    const app = engine();
    const { submit, id } = await submittedInSpan(tracing, app, 'traces-fan-out', { width: 3 });
    const worker = await app.startWorker({ queues: ['q-tree'], concurrency: 4 });
    await workflowIn(app, id, 'succeeded');
    const [fan] = await stepSpans(tracing, id, 1);
    const children = await childWorkflowIds(url(), id);
    expect(children).toHaveLength(3);
    const childSpans = await Promise.all(
      children.map(async (child) => (await stepSpans(tracing, child, 1))[0]),
    );
    await worker.stop();
    expect(fan?.attributes['causeway.reason']).toBe('children_started');
    expect(fan?.parentSpanContext?.spanId).toBe(submit.spanContext().spanId);
    const fanSpan = fan as NonNullable<typeof fan>;
    for (const child of children) {
      expect(await storedContext(url(), child)).toEqual({
        traceparent: traceparentOf(fanSpan),
      });
    }
    for (const span of childSpans) {
      expect(span?.spanContext().traceId).toBe(submit.spanContext().traceId);
      expect(span?.parentSpanContext?.spanId).toBe(fanSpan.spanContext().spanId);
      expect(span?.attributes['causeway.step']).toBe('work');
      expect(span?.attributes['causeway.reason']).toBe('completed');
    }
  });
});

describe('an event sent in a span (R57)', () => {
  it('stores the sender’s context; the wait it completes links to the sender', async () => {
    const app = engine();
    const { submit, id } = await submittedInSpan(tracing, app, 'traces-approval', { noteId: 'n7' });
    const { span: sender, result: answer } = await tracing.inSpan('editor approves', () =>
      app.sendEvent('note.approved', 'n7', { editor: 'ada' }),
    );
    expect(answer.tasks.map((task) => task.state)).toEqual(['succeeded']);
    const [event] = await query<{ trace_context: unknown }>(
      url(),
      'select trace_context from causeway_events where id = $1',
      [answer.eventId],
    );
    expect(event?.trace_context).toEqual({ traceparent: traceparentOf(sender) });
    const [received] = await stepSpans(tracing, id, 1);
    expect(received?.attributes).toEqual({
      'causeway.workflow.id': id,
      'causeway.task.id': answer.tasks[0]?.taskId,
      'causeway.step': 'approved',
      'causeway.reason': 'event_received',
      'causeway.event.id': answer.eventId,
    });
    // In the waiting workflow's trace, under the submit, with a link to the sender.
    expect(received?.spanContext().traceId).toBe(submit.spanContext().traceId);
    expect(received?.parentSpanContext?.spanId).toBe(submit.spanContext().spanId);
    expect(received?.links.map((link) => link.context)).toMatchObject([
      { traceId: sender.spanContext().traceId, spanId: sender.spanContext().spanId },
    ]);
    // The step it made ready runs as the workflow's other first attempts do.
    const worker = await app.startWorker({ queues: ['q-tree'], concurrency: 2 });
    await workflowIn(app, id, 'succeeded');
    const spans = await stepSpans(tracing, id, 2);
    await worker.stop();
    const publish = spans.find((span) => span.attributes['causeway.step'] === 'publish');
    expect(publish?.parentSpanContext?.spanId).toBe(submit.spanContext().spanId);
  });

  it('a repeat of a sent event records no second span', async () => {
    const app = engine();
    const { id } = await submittedInSpan(tracing, app, 'traces-approval', { noteId: 'n8' });
    const send = () =>
      tracing.inSpan('editor approves', () =>
        app.sendEvent('note.approved', 'n8', { editor: 'bo' }, { idempotencyKey: 'once' }),
      );
    const first = await send();
    const repeat = await send();
    expect(repeat.result).toMatchObject({ eventId: first.result.eventId, deduplicated: true });
    await stepSpans(tracing, id, 1);
    const received = tracing.exporter
      .getFinishedSpans()
      .filter((span) => span.attributes['causeway.event.id'] === first.result.eventId);
    expect(received).toHaveLength(1);
  });

  it('an event sent outside any span stores nothing', async () => {
    const app = engine();
    await app.submit('traces-approval', { noteId: 'n9' });
    const answer = await app.sendEvent('note.approved', 'n9', { editor: 'cy' });
    const [event] = await query<{ trace_context: unknown }>(
      url(),
      'select trace_context from causeway_events where id = $1',
      [answer.eventId],
    );
    expect(event?.trace_context).toBeNull();
    expect(answer.tasks.map((task) => task.state)).toEqual(['succeeded']);
  });
});

describe('a worker started in a span (R57)', () => {
  afterEach(() => setDatabaseClockOffset(url(), 0));

  it('keeps the span out of its loops: a schedule’s tick stores no context', async () => {
    const app = engine();
    const before = (await scheduledWorkflows(url(), 'traces-minute')).length;
    await tracing.inSpan('boot', () => app.startWorker({ queues: ['q-tree'], concurrency: 2 }));
    // A day later by the database clock: the worker's scheduler submits the latest tick.
    await setDatabaseClockOffset(url(), 24 * 3_600_000);
    const ticks = await waitFor(async () => {
      const rows = await scheduledWorkflows(url(), 'traces-minute');
      return rows.length > before ? rows : undefined;
    });
    for (const tick of ticks) expect(await storedContext(url(), tick.id)).toBeNull();
  });
});
