/**
 * Traces (R57), attempts: the submit stores the caller's trace context on the workflow; each
 * attempt is a `causeway.step` span with the workflow, task, step, attempt and the reason of
 * the edge that ended it; a first attempt is a child of the submit's span, a retry or a
 * replay a new trace linked to it. The SDK is registered as an application does; real
 * PostgreSQL, real workers.
 */
import { StepError, workflow } from '@causeway/workflow';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { testEngine } from '../helpers/engine';
import {
  childrenOf,
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

const threeSteps = workflow({ name: 'traces-three', input: z.object({ id: z.string() }) })
  .step('render', {
    queue: 'q-traces',
    // A span of the handler's own: a child of its attempt's span.
    run: () => trace.getTracer('handler').startActiveSpan('render.inside', (span) => span.end()),
  })
  .step('review', { after: ['render'], queue: 'q-traces', run: () => 'reviewed' })
  .step('publish', { after: ['review'], queue: 'q-traces', run: () => 'published' })
  .build();

/** Fails its first attempt with a retryable error, or every attempt while `failing` says so. */
let failing = true;
const flaky = workflow({ name: 'traces-flaky', input: z.object({ mode: z.string() }) })
  .step('call', {
    queue: 'q-traces',
    maxAttempts: 3,
    backoff: { initialIntervalMs: 0, maximumIntervalMs: 0 },
    run: (ctx) => {
      if (ctx.input.mode === 'retry' && ctx.attempt === 1) {
        throw new StepError('network', 'the platform dropped the connection');
      }
      if (ctx.input.mode === 'replay' && failing) {
        throw new StepError('invalid_argument', 'the platform refused the note');
      }
      return { attempt: ctx.attempt };
    },
  })
  .build();

const workflows = [threeSteps, flaky];
const engine = () => testEngine(url(), { workflows });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

describe('a submit in a span (R57)', () => {
  it('stores its context, and each step’s first attempt is a child of its span', async () => {
    const app = engine();
    const { submit, id } = await submittedInSpan(tracing, app, 'traces-three', { id: 'n1' });
    expect(await storedContext(url(), id)).toEqual({ traceparent: traceparentOf(submit) });
    const worker = await app.startWorker({ queues: ['q-traces'], concurrency: 2 });
    const view = await workflowIn(app, id, 'succeeded');
    const spans = await stepSpans(tracing, id, 3);
    await worker.stop();
    expect(spans).toHaveLength(3);
    const { traceId, spanId } = submit.spanContext();
    for (const task of view.tasks) {
      const span = spans.find((each) => each.attributes['causeway.step'] === task.step);
      expect(span?.spanContext().traceId).toBe(traceId);
      expect(span?.parentSpanContext?.spanId).toBe(spanId);
      expect(span?.attributes).toEqual({
        'causeway.workflow.id': id,
        'causeway.workflow.name': 'traces-three',
        'causeway.task.id': task.id,
        'causeway.step': task.step,
        'causeway.attempt': 1,
        'causeway.reason': 'completed',
        'causeway.outcome': 'completed',
      });
      expect(span?.links).toEqual([]);
      expect(span?.status.code).toBe(SpanStatusCode.UNSET);
    }
    // In the order the steps ran, each ended after its edge was written.
    const order = [...spans].sort(
      (a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1],
    );
    expect(order.map((span) => span.attributes['causeway.step'])).toEqual([
      'render',
      'review',
      'publish',
    ]);
    // The handler ran in its attempt's span: its own span is that span's child.
    const render = spans.find((span) => span.attributes['causeway.step'] === 'render');
    expect(
      childrenOf(tracing, render as NonNullable<typeof render>).map((span) => span.name),
    ).toEqual(['render.inside']);
  });

  it('a batch submit in a span stores the same context on every workflow', async () => {
    const app = engine();
    const { span, result } = await tracing.inSpan('submit batch', () =>
      app.submitMany([
        { name: 'traces-three', input: { id: 'b1' } },
        { name: 'traces-flaky', input: { mode: 'ok' } },
      ]),
    );
    for (const answer of result) {
      expect(await storedContext(url(), answer.workflow.id)).toEqual({
        traceparent: traceparentOf(span),
      });
    }
  });

  it('a submit outside any span stores nothing; its attempts are traces of their own', async () => {
    const app = engine();
    const { workflow: submitted } = await app.submit('traces-flaky', { mode: 'ok' });
    expect(await storedContext(url(), submitted.id)).toBeNull();
    const worker = await app.startWorker({ queues: ['q-traces'], concurrency: 2 });
    await workflowIn(app, submitted.id, 'succeeded');
    const [span] = await stepSpans(tracing, submitted.id, 1);
    await worker.stop();
    expect(span?.parentSpanContext).toBeUndefined();
    expect(span?.links).toEqual([]);
    expect(span?.attributes['causeway.reason']).toBe('completed');
  });
});

describe('retries and replays (R57)', () => {
  it('a retry is a new trace linked to the submit; the failed attempt is an error', async () => {
    const app = engine();
    const { submit, id } = await submittedInSpan(tracing, app, 'traces-flaky', { mode: 'retry' });
    const worker = await app.startWorker({ queues: ['q-traces'], concurrency: 2 });
    await workflowIn(app, id, 'succeeded');
    const spans = await stepSpans(tracing, id, 2);
    await worker.stop();
    const first = spans.find((span) => span.attributes['causeway.attempt'] === 1);
    const second = spans.find((span) => span.attributes['causeway.attempt'] === 2);
    expect(first?.spanContext().traceId).toBe(submit.spanContext().traceId);
    expect(first?.parentSpanContext?.spanId).toBe(submit.spanContext().spanId);
    expect(first?.attributes['causeway.reason']).toBe('retry_scheduled');
    expect(first?.attributes['causeway.outcome']).toBe('failed');
    expect(first?.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'the platform dropped the connection',
    });
    expect(first?.events.map((event) => event.name)).toEqual(['exception']);
    expect(second?.spanContext().traceId).not.toBe(submit.spanContext().traceId);
    expect(second?.parentSpanContext).toBeUndefined();
    expect(second?.links.map((link) => link.context.spanId)).toEqual([submit.spanContext().spanId]);
    expect(second?.links[0]?.context.traceId).toBe(submit.spanContext().traceId);
    expect(second?.attributes['causeway.reason']).toBe('completed');
    expect(second?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('a replay’s attempt is a new trace linked to the submit, though it is attempt 1', async () => {
    const app = engine();
    failing = true;
    const { submit, id } = await submittedInSpan(tracing, app, 'traces-flaky', { mode: 'replay' });
    const worker = await app.startWorker({ queues: ['q-traces'], concurrency: 2 });
    const dead = await workflowIn(app, id, 'dead');
    const [refused] = await stepSpans(tracing, id, 1);
    expect(refused?.attributes['causeway.reason']).toBe('non_retryable_error');
    expect(refused?.status.code).toBe(SpanStatusCode.ERROR);
    expect(refused?.parentSpanContext?.spanId).toBe(submit.spanContext().spanId);
    failing = false;
    await app.replayTask(dead.tasks[0]?.id as string, { operator: 'ana', reason: 'fixed' });
    await workflowIn(app, id, 'succeeded');
    const spans = await stepSpans(tracing, id, 2);
    await worker.stop();
    const replayed = spans.find((span) => span !== refused);
    expect(replayed?.attributes['causeway.attempt']).toBe(1);
    expect(replayed?.attributes['causeway.reason']).toBe('completed');
    expect(replayed?.spanContext().traceId).not.toBe(submit.spanContext().traceId);
    expect(replayed?.parentSpanContext).toBeUndefined();
    expect(replayed?.links.map((link) => link.context.spanId)).toEqual([
      submit.spanContext().spanId,
    ]);
  });
});
