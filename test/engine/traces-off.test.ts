/**
 * Traces (R57) with no tracer: an application that registers no OpenTelemetry SDK gets no
 * stored context (the columns stay null) and workflows, children and events run as before.
 * Nothing is registered in this file (it runs in a process of its own).
 */
import { startChildren, workflow } from '@causeway/workflow';
import { trace } from '@opentelemetry/api';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { expectLogIsSound } from './semantics-support';

const database = useTestDatabase();
const url = () => database().url;

const child = workflow({ name: 'untraced-child', input: z.object({ n: z.number() }) })
  .step('work', { queue: 'q-untraced', run: (ctx) => ctx.input.n + 1 })
  .build();
const parent = workflow({ name: 'untraced-parent', input: z.object({ noteId: z.string() }) })
  .step('fan', { queue: 'q-untraced', run: () => startChildren(child, [{ n: 1 }, { n: 2 }]) })
  .event('approved', {
    after: ['fan'],
    name: 'untraced.approved',
    key: (ctx) => ctx.input.noteId,
    timeoutMs: 3_600_000,
  })
  .step('publish', {
    after: ['approved'],
    queue: 'q-untraced',
    run: (ctx) => ({ children: ctx.results.fan, approval: ctx.results.approved }),
  })
  .build();
const engine = () => testEngine(url(), { workflows: [child, parent] });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

describe('no tracer registered (R57)', () => {
  it('stores no context and runs workflows, children and events as before', async () => {
    const app = engine();
    // The api's no-op tracer: a span it starts is not recording and carries no context.
    const { workflow: submitted } = await trace
      .getTracer('app')
      .startActiveSpan('submit', async (span) => {
        expect(span.isRecording()).toBe(false);
        const answer = await app.submit('untraced-parent', { noteId: 'n1' });
        span.end();
        return answer;
      });
    const worker = await app.startWorker({ queues: ['q-untraced'], concurrency: 2 });
    await waitFor(async () => (await app.getWorkflow(submitted.id))?.state === 'waiting');
    const sent = await app.sendEvent('untraced.approved', 'n1', { editor: 'ada' });
    expect(sent.tasks.map((task) => task.state)).toEqual(['succeeded']);
    const done = await waitFor(async () => {
      const found = await app.getWorkflow(submitted.id);
      return found?.state === 'succeeded' ? found : undefined;
    });
    await worker.stop();
    expect(done.tasks.find((task) => task.step === 'publish')?.output).toEqual({
      children: [2, 3],
      approval: { editor: 'ada' },
    });
    const stored = await query<{ workflows: number; traced: number; events: number }>(
      url(),
      `select (select count(*)::int from causeway_workflows) as workflows,
              (select count(*)::int from causeway_workflows where trace_context is not null)
                as traced,
              (select count(*)::int from causeway_events where trace_context is not null)
                as events`,
    );
    expect(stored).toEqual([{ workflows: 3, traced: 0, events: 0 }]);
    await expectLogIsSound(url());
  });
});
