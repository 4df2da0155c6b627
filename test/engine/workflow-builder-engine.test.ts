/**
 * A workflow declared with the builder runs on the engine, and each step's `ctx.results` holds
 * what its types say: the stored (JSON) outputs of exactly the steps upstream of it.
 */
import { awaitReceipt, workflow } from '@causeway/workflow';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

const database = useTestDatabase();

const typedNotes = workflow({
  name: 'typed-notes',
  input: z.object({ noteId: z.string(), title: z.string() }),
  idempotencyKey: (input) => `note:${input.noteId}`,
})
  .step('render', {
    queue: 'cpu',
    reentrant: true,
    run: (ctx) => ({ html: `<h1>${ctx.input.title}</h1>`, renderedAt: new Date(0) }),
  })
  .step('review', {
    after: ['render'],
    run: (ctx) => ({
      approved: ctx.results.render.html.length > 0,
      // A Date comes back as its JSON string, as the type of the result says.
      renderedAtType: typeof ctx.results.render.renderedAt,
      visible: Object.keys(ctx.results),
    }),
  })
  .step('archive', { after: ['render'], run: () => undefined })
  .step('submit', {
    after: ['review'],
    run: (ctx) =>
      ctx.results.review.approved
        ? awaitReceipt({ receiptId: `receipt-${ctx.input.noteId}`, timeoutMs: 60_000 })
        : null,
  })
  .step('publish', {
    after: ['submit', 'archive'],
    queue: 'network',
    run: async (ctx) => {
      expectTypeOf(ctx.results.render.renderedAt).toEqualTypeOf<string>();
      expectTypeOf(ctx.results.archive).toEqualTypeOf<null>();
      expectTypeOf(ctx.results.submit).toBeUnknown();
      return { url: `/notes/${ctx.input.noteId}`, seen: ctx.results };
    },
  })
  .build();

describe('a workflow declared with the builder', () => {
  it('runs end to end with ctx.results holding the upstream outputs', async () => {
    const engine = testEngine(database().url, { workflows: [typedNotes] });
    await engine.migrate();
    const { workflow: submitted } = await engine.submit('typed-notes', {
      noteId: 'n1',
      title: 'Hi',
    });
    const again = await engine.submit('typed-notes', { noteId: 'n1', title: 'Hi' });
    expect(again).toMatchObject({ deduplicated: true, workflow: { id: submitted.id } });

    const worker = await engine.startWorker({ concurrency: 2 });
    const waiting = await waitFor(async () => {
      const view = await engine.getWorkflow(submitted.id);
      return view?.tasks.find(
        (task) => task.step === 'submit' && task.state === 'awaiting_receipt',
      );
    });
    expect(await engine.recordReceipt(waiting.id, { ok: true })).toMatchObject({
      state: 'succeeded',
    });
    const done = await waitFor(async () => {
      const view = await engine.getWorkflow(submitted.id);
      return view?.state === 'succeeded' ? view : undefined;
    });
    await worker.stop();

    const outputs = Object.fromEntries(done.tasks.map((task) => [task.step, task.output]));
    const rendered = { html: '<h1>Hi</h1>', renderedAt: '1970-01-01T00:00:00.000Z' };
    expect(outputs).toEqual({
      render: rendered,
      review: { approved: true, renderedAtType: 'string', visible: ['render'] },
      archive: null,
      // What the receipt brought (typed unknown): a confirmation carries nothing today.
      submit: null,
      publish: {
        url: '/notes/n1',
        // Every upstream step, directly (submit, archive) or not (review, render); none other.
        seen: {
          render: rendered,
          review: { approved: true, renderedAtType: 'string', visible: ['render'] },
          archive: null,
          submit: null,
        },
      },
    });
    expect(done.tasks.map((task) => [task.step, task.queue])).toEqual([
      ['render', 'cpu'],
      ['review', 'default'],
      ['archive', 'default'],
      ['submit', 'default'],
      ['publish', 'network'],
    ]);
    expect(await logMismatches(database().url)).toEqual([]);
  });
});
