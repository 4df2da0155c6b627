/**
 * Traces (R57), where an attempt finds its parent and how a refused one ends. The claim (one
 * statement or in full) and a settle that leases the next step hand each attempt its
 * workflow's stored context, so a traced worker reads nothing more per claim; a decision in
 * full leaves it to the attempt to read. A result that comes after its lease was lost (a
 * stale attempt, R56) ends its span as an error that says so. Real PostgreSQL, real workers;
 * the database clock is moved to expire a lease.
 */
import type { WorkerHandle } from '@causeway/engine';
import { workflow } from '@causeway/workflow';
import { workflowRegistry } from '@causeway/workflow/internal';
import { SpanStatusCode } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ApplyContext } from '../../packages/engine/src/runtime/decision/event-request';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { claimOf } from './claim-paths';
import {
  registerTestTracing,
  stepSpans,
  submittedInSpan,
  traceparentOf,
  workflowIn,
} from './traces-support';

const database = useTestDatabase();
const url = () => database().url;
const tracing = registerTestTracing();

/** What each attempt of `traces-seen` was handed, by step: its trace parent as claimed. */
const handed = new Map<string, unknown>();
let seenWorker: WorkerHandle | null = null;
function recordHanded(step: string, taskId: string): void {
  const attempt = [...(seenWorker?.running ?? [])].find(
    (running) => running.claimed.task.id === taskId,
  );
  handed.set(step, attempt === undefined ? 'not running' : attempt.claimed.traceParent);
}

const seen = workflow({ name: 'traces-seen', input: z.object({ id: z.string() }) })
  .step('render', { queue: 'q-seen', run: (ctx) => recordHanded('render', ctx.taskId) })
  .step('review', {
    after: ['render'],
    queue: 'q-seen',
    run: (ctx) => recordHanded('review', ctx.taskId),
  })
  .build();

/** Each run waits for the test; a stalled run ignores its signal and returns late. */
const releases: Array<() => void> = [];
const held = workflow({ name: 'traces-held', input: z.object({ id: z.string() }) })
  .step('only', {
    queue: 'q-held',
    reentrant: true,
    run: () =>
      new Promise<string>((resolve) => {
        releases.push(() => resolve('done'));
      }),
  })
  .build();

const workflows = [seen, held];
const engine = () => testEngine(url(), { workflows });
const apply = (): ApplyContext => ({
  definitions: workflowRegistry(workflows),
  leaseMs: 30_000,
  random: Math.random,
});

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

afterEach(async () => {
  await setDatabaseClockOffset(url(), 0);
});

afterAll(async () => {
  for (const release of releases) release();
  await setDatabaseClockOffset(url(), 0);
});

describe('an attempt’s trace parent comes with its lease (R57)', () => {
  it('a claim in one statement and a settle that leases the next step both hand it over', async () => {
    const app = engine();
    const { submit, id } = await submittedInSpan(tracing, app, 'traces-seen', { id: 's1' });
    const worker = await app.startWorker({ queues: ['q-seen'], concurrency: 1 });
    seenWorker = worker;
    await workflowIn(app, id, 'succeeded');
    const spans = await stepSpans(tracing, id, 2);
    await worker.stop();
    const parent = { carrier: { traceparent: traceparentOf(submit) }, replayCount: 0 };
    expect(Object.fromEntries(handed)).toEqual({ render: parent, review: parent });
    for (const span of spans) {
      expect(span.parentSpanContext?.spanId).toBe(submit.spanContext().spanId);
    }
  });

  it('answers null for a workflow submitted outside any span, and nothing in full', async () => {
    const app = engine();
    const traced = await submittedInSpan(tracing, app, 'traces-held', { id: 'c1' });
    const { workflow: untraced } = await app.submit('traces-held', { id: 'c2' });
    const statement = claimOf('one statement', app, 'q-held', apply);
    const claimed = (await statement(app.db, 2)).claimed;
    const byWorkflow = new Map(claimed.map((each) => [each.task.workflowId, each.traceParent]));
    expect(byWorkflow.get(traced.id)).toEqual({
      carrier: { traceparent: traceparentOf(traced.submit) },
      replayCount: 0,
    });
    expect(byWorkflow.get(untraced.id)).toBeNull();

    const third = await submittedInSpan(tracing, app, 'traces-held', { id: 'c3' });
    const inFull = claimOf('in full', app, 'q-held', apply);
    const [full] = (await inFull(app.db, 1)).claimed;
    expect(full?.task.workflowId).toBe(third.id);
    // Undefined: the attempt reads its parent itself (`traceParentOf`).
    expect(full?.traceParent).toBeUndefined();
    await query(url(), "update causeway_tasks set state = 'cancelled' where queue = 'q-held'");
  });
});

describe('a stale attempt’s span (R56, R57)', () => {
  it('ends as an error that says its result was refused, with no edge’s reason', async () => {
    const a = engine();
    const b = engine();
    const workerA = await a.startWorker({ queues: ['q-held'], concurrency: 1, sweeper: false });
    const { submit, id } = await submittedInSpan(tracing, a, 'traces-held', { id: 'z1' });
    const stalled = await waitFor(() => [...workerA.running].find((run) => run.fence.epoch === 1));
    // Ten seconds on by the database clock: A's two-second lease has run out; B's sweeper
    // queues the task again and B's worker runs it while A's handler is still stalled.
    await setDatabaseClockOffset(url(), 10_000);
    expect(await b.sweep()).toBeGreaterThan(0);
    const workerB = await b.startWorker({ queues: ['q-held'], concurrency: 1, sweeper: false });
    await waitFor(() => (workerB.running.size > 0 ? true : undefined));
    releases.at(-1)?.();
    await workflowIn(b, id, 'succeeded');
    releases.at(-2)?.();
    await stalled.written;
    expect(stalled.writtenEdge).toBeNull();

    const spans = await stepSpans(tracing, id, 2);
    await workerA.stop();
    await workerB.stop();
    const [first, second] = [1, 2].map((attempt) =>
      spans.find((span) => span.attributes['causeway.attempt'] === attempt),
    );
    expect(first?.attributes['causeway.result.refused']).toBe('stale');
    expect(first?.attributes['causeway.reason']).toBeUndefined();
    expect(first?.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'the lease was lost before the result was written; nothing changed',
    });
    expect(first?.parentSpanContext?.spanId).toBe(submit.spanContext().spanId);
    // The re-claim is a new trace linked to the submit, and it ended the task.
    expect(second?.attributes['causeway.reason']).toBe('completed');
    expect(second?.attributes['causeway.result.refused']).toBeUndefined();
    expect(second?.spanContext().traceId).not.toBe(submit.spanContext().traceId);
    expect(second?.links.map((link) => link.context.spanId)).toEqual([submit.spanContext().spanId]);
  });
});
