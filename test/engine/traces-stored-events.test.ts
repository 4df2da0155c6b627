/**
 * Traces (R57) of waits completed by an event stored before them: when a step starts waiting
 * and its event is already stored (R37), and when a sweep completes a wait with an event an
 * engine that lacked its workflow stored (R54). Each is recorded as a send's completion is: a
 * `causeway.step` span with reason `event_received` in the waiting workflow's trace, linked
 * to the span the event was sent in, once. The SDK is registered as an application does; real
 * PostgreSQL, real workers.
 */
import { workflow } from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { testEngine } from '../helpers/engine';
import { rollingDigest, rollingReview } from './fixtures/rolling-event-workflows';
import {
  type ReadableSpan,
  registerTestTracing,
  stepSpans,
  submittedInSpan,
  workflowIn,
} from './traces-support';

const database = useTestDatabase();
const url = () => database().url;
const tracing = registerTestTracing();

const approval = {
  name: 'stored.approved',
  key: (ctx: { input: { noteId: string } }) => ctx.input.noteId,
  payload: z.object({ editor: z.string() }),
  timeoutMs: 3_600_000,
};
/** A step, then a wait: the wait starts when the worker's result promotes it. */
const reviewed = workflow({ name: 'stored-reviewed', input: z.object({ noteId: z.string() }) })
  .step('draft', { queue: 'q-stored', run: () => 'drafted' })
  .event('approved', { after: ['draft'], ...approval })
  .step('publish', { after: ['approved'], queue: 'q-stored', run: () => 'published' })
  .build();
/** Two waits in a row: one send of both events completes the second as it starts. */
const twice = workflow({ name: 'stored-twice', input: z.object({ noteId: z.string() }) })
  .event('approved', approval)
  .event('signed', { after: ['approved'], ...approval, name: 'stored.signed' })
  .build();
const engine = () => testEngine(url(), { workflows: [reviewed, twice] });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

/** The `event_received` spans of a workflow, once there are `count`. */
async function receivedSpans(workflowId: string, count = 1): Promise<ReadableSpan[]> {
  const spans = await stepSpans(tracing, workflowId, count);
  return spans.filter((span) => span.attributes['causeway.reason'] === 'event_received');
}

/** What each span of a wait completed by a stored event must be: a send's, as R57 has it. */
function expectWaitSpan(
  span: ReadableSpan | undefined,
  expected: {
    readonly workflowId: string;
    readonly step: string;
    readonly eventId: string;
    readonly submit: { spanContext(): { traceId: string; spanId: string } };
    readonly sender: { spanContext(): { traceId: string; spanId: string } };
  },
): void {
  expect(span?.attributes).toEqual({
    'causeway.workflow.id': expected.workflowId,
    'causeway.task.id': expect.any(String),
    'causeway.step': expected.step,
    'causeway.reason': 'event_received',
    'causeway.event.id': expected.eventId,
  });
  expect(span?.spanContext().traceId).toBe(expected.submit.spanContext().traceId);
  expect(span?.parentSpanContext?.spanId).toBe(expected.submit.spanContext().spanId);
  expect(span?.links.map((link) => link.context)).toMatchObject([
    {
      traceId: expected.sender.spanContext().traceId,
      spanId: expected.sender.spanContext().spanId,
    },
  ]);
}

describe('a wait that meets an event stored before it (R37, R57)', () => {
  it('records the wait its promotion completes, linked to the event’s sender', async () => {
    const app = engine();
    const { submit, id } = await submittedInSpan(tracing, app, 'stored-reviewed', { noteId: 'r1' });
    // Sent before the wait starts: stored with its sender's context, completing nothing yet.
    const { span: sender, result: sent } = await tracing.inSpan('editor approves early', () =>
      app.sendEvent('stored.approved', 'r1', { editor: 'ada' }),
    );
    expect(sent.tasks).toEqual([]);
    const worker = await app.startWorker({ queues: ['q-stored'], concurrency: 2 });
    await workflowIn(app, id, 'succeeded');
    const spans = await stepSpans(tracing, id, 3);
    await worker.stop();
    const received = spans.filter(
      (span) => span.attributes['causeway.reason'] === 'event_received',
    );
    expect(received).toHaveLength(1);
    expectWaitSpan(received[0], {
      workflowId: id,
      step: 'approved',
      eventId: sent.eventId,
      submit,
      sender,
    });
    const task = (await app.getWorkflow(id))?.tasks.find((each) => each.step === 'approved');
    expect(received[0]?.attributes['causeway.task.id']).toBe(task?.id);
  });

  it('records nothing for an event sent outside any span, as at its send', async () => {
    const app = engine();
    const { id } = await submittedInSpan(tracing, app, 'stored-reviewed', { noteId: 'r3' });
    const sent = await app.sendEvent('stored.approved', 'r3', { editor: 'cy' });
    expect(sent.tasks).toEqual([]);
    const worker = await app.startWorker({ queues: ['q-stored'], concurrency: 2 });
    await workflowIn(app, id, 'succeeded');
    const spans = await stepSpans(tracing, id, 2);
    await worker.stop();
    expect(spans.map((span) => span.attributes['causeway.step']).sort()).toEqual([
      'draft',
      'publish',
    ]);
    expect(
      tracing.exporter
        .getFinishedSpans()
        .filter((span) => span.attributes['causeway.event.id'] === sent.eventId),
    ).toEqual([]);
  });
});

describe('a batch whose events complete waits one after the other (R37, R57)', () => {
  it('records each wait once, linked to the send', async () => {
    const app = engine();
    const { submit, id } = await submittedInSpan(tracing, app, 'stored-twice', { noteId: 't1' });
    // The second event is stored by the send itself, before the wait it completes starts.
    const { span: sender, result: sent } = await tracing.inSpan('editor signs off', () =>
      app.sendEvents([
        { name: 'stored.approved', key: 't1', payload: { editor: 'di' } },
        { name: 'stored.signed', key: 't1', payload: { editor: 'di' } },
      ]),
    );
    expect(sent.map((answer) => answer.tasks.map((task) => task.step))).toEqual([
      ['approved'],
      ['signed'],
    ]);
    const received = await receivedSpans(id, 2);
    expect(received.map((span) => span.attributes['causeway.step']).sort()).toEqual([
      'approved',
      'signed',
    ]);
    for (const [index, step] of ['approved', 'signed'].entries()) {
      expectWaitSpan(
        received.find((span) => span.attributes['causeway.step'] === step),
        { workflowId: id, step, eventId: sent[index]?.eventId as string, submit, sender },
      );
    }
  });
});

describe('a wait a sweep completes with a stored event (R54, R57)', () => {
  it('records it in the waiting workflow’s trace, linked to the sender on the other engine', async () => {
    const reviews = testEngine(url(), { workflows: [rollingReview] });
    await reviews.migrate();
    const digests = testEngine(url(), { workflows: [rollingDigest] });
    const { submit, id } = await submittedInSpan(tracing, reviews, 'rolling-review', {
      noteId: 's1',
    });
    // The engine that lacks the review stores the event and leaves the wait.
    const { span: sender, result: sent } = await tracing.inSpan('approval elsewhere', () =>
      digests.sendEvent('rolling.approved', 's1', { approved: true, editor: 'ed' }),
    );
    expect(sent.tasks).toEqual([]);
    expect(await receivedSpans(id, 0)).toEqual([]);
    expect(await reviews.sweep()).toBeGreaterThan(0);
    // The sweep answered after recording it.
    const received = await receivedSpans(id);
    expect(received).toHaveLength(1);
    expectWaitSpan(received[0], {
      workflowId: id,
      step: 'approval',
      eventId: sent.eventId,
      submit,
      sender,
    });
    // A second sweep finds the wait done and records nothing more.
    await reviews.sweep();
    expect(await receivedSpans(id)).toHaveLength(1);
  });
});
