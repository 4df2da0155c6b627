import { httpChannel } from '@causeway/engine';
import { defineWorkflow, send, step } from '@causeway/workflow';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Platform, startPlatform } from '../../examples/platform/server';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

const database = useTestDatabase();
let platform: Platform | undefined;
afterEach(async () => {
  await platform?.close();
  platform = undefined;
});

const input = z.object({ noteId: z.string(), version: z.number().int() });
const publish = defineWorkflow({
  name: 'outbox-publish',
  input,
  steps: {
    publish: step<z.output<typeof input>>({
      reentrant: false,
      maxAttempts: 2,
      run: (ctx) =>
        send('platform', {
          noteId: ctx.input.noteId,
          version: ctx.input.version,
          title: `Note ${ctx.input.noteId}`,
          html: '<p>hi</p>',
        }),
    }),
  },
});

async function engineWithPlatform(options: { confirm: 'response' | 'receipt'; outbox?: boolean }) {
  platform = await startPlatform({});
  const engine = testEngine(database().url, {
    workflows: [publish],
    channels: [
      httpChannel({
        name: 'platform',
        url: `${platform.url}/posts`,
        confirm: options.confirm,
        timeoutMs: 2_000,
      }),
    ],
  });
  await engine.migrate();
  return engine;
}

describe('transactional outbox (R22)', () => {
  it('sends after the edge commits, with the outbox id as idempotency key, and confirms the task', async () => {
    const engine = await engineWithPlatform({ confirm: 'response' });
    const { workflow } = await engine.submit('outbox-publish', { noteId: 'n1', version: 1 });
    const worker = await engine.startWorker({ concurrency: 2 });
    const done = await waitFor(async () => {
      const current = await engine.getWorkflow(workflow.id);
      return current?.state === 'succeeded' ? current : undefined;
    });
    await worker.stop();
    const stats = platform?.stats();
    expect(stats?.postsPublished).toBe(1);
    const task = done.tasks[0];
    expect(task?.transitions.map((row) => `${row.reason}:${row.actor.split(':')[0]}`)).toEqual([
      'submitted:client',
      'lease_acquired:worker',
      'submitted_awaiting_receipt:worker',
      'receipt_confirmed:receipt',
    ]);
    const outbox = await query<{ id: string; state: string; attempts: number }>(
      database().url,
      'select id, state, attempts from causeway_outbox where task_id = $1',
      [task?.id],
    );
    const sent = task?.transitions.find((row) => row.reason === 'submitted_awaiting_receipt');
    expect(sent?.detail).toEqual({ receiptId: outbox[0]?.id, outboxChannel: 'platform' });
    expect(outbox).toEqual([{ id: sent?.detail?.receiptId, state: 'delivered', attempts: 1 }]);
    expect(stats?.posts[0]?.idempotencyKey).toBe(outbox[0]?.id);
    expect(await logMismatches(database().url)).toEqual([]);
  });

  it('retries a 503 storm with backoff, records every attempt, and still publishes once', async () => {
    const engine = await engineWithPlatform({ confirm: 'response' });
    platform?.configure({
      endpoints: { publishPost: { sequence: [{ kind: 'unavailable', times: 2 }] } },
    });
    const { workflow } = await engine.submit('outbox-publish', { noteId: 'n2', version: 1 });
    const worker = await engine.startWorker({ concurrency: 2 });
    await waitFor(async () => (await engine.getWorkflow(workflow.id))?.state === 'succeeded', {
      timeoutMs: 20_000,
    });
    await worker.stop();
    expect(platform?.stats().postsPublished).toBe(1);
    const deliveries = await query<{
      outcome: string;
      status_code: number;
      error_category: string | null;
    }>(
      database().url,
      `select d.outcome, d.status_code, d.error_category from causeway_outbox_deliveries d
         join causeway_outbox o on o.id = d.outbox_id
         join causeway_tasks t on t.id = o.task_id where t.workflow_id = $1 order by d.id`,
      [workflow.id],
    );
    expect(deliveries).toEqual([
      { outcome: 'retry', status_code: 503, error_category: 'unavailable' },
      { outcome: 'retry', status_code: 503, error_category: 'unavailable' },
      { outcome: 'delivered', status_code: 201, error_category: null },
    ]);
  });

  it('a message committed while no dispatcher runs is sent exactly once when one starts', async () => {
    const engine = await engineWithPlatform({ confirm: 'response' });
    const { workflow } = await engine.submit('outbox-publish', { noteId: 'n3', version: 1 });
    const noDispatcher = await engine.startWorker({ concurrency: 1, outbox: false });
    await waitFor(
      async () => (await engine.getWorkflow(workflow.id))?.tasks[0]?.state === 'awaiting_receipt',
    );
    await noDispatcher.stop();
    expect(platform?.stats().postsPublished).toBe(0);
    const [a, b] = await Promise.all([
      engine.startWorker({ concurrency: 1 }),
      engine.startWorker({ concurrency: 1 }),
    ]);
    await waitFor(async () => (await engine.getWorkflow(workflow.id))?.state === 'succeeded');
    await Promise.all([a.stop(), b.stop()]);
    expect(platform?.stats().postsPublished).toBe(1);
  });

  it('a 401 rejects the receipt as unauthorized: dead after one delivery, never retried', async () => {
    const engine = await engineWithPlatform({ confirm: 'response' });
    platform?.configure({ endpoints: { publishPost: { fault: { kind: 'unauthorized' } } } });
    const { workflow } = await engine.submit('outbox-publish', { noteId: 'n4', version: 1 });
    const worker = await engine.startWorker({ concurrency: 1 });
    const dead = await waitFor(async () => {
      const current = await engine.getWorkflow(workflow.id);
      return current?.state === 'dead' ? current : undefined;
    });
    await worker.stop();
    expect(dead.tasks[0]?.transitions.at(-1)).toMatchObject({
      reason: 'receipt_rejected',
      errorCategory: 'unauthorized',
      to: 'dead',
    });
    expect(platform?.stats().postsPublished).toBe(0);
  });

  it('with a receipt contract the task waits in awaiting_receipt; a receipt arriving twice is harmless', async () => {
    const engine = await engineWithPlatform({ confirm: 'receipt' });
    const { workflow } = await engine.submit('outbox-publish', { noteId: 'n5', version: 1 });
    const worker = await engine.startWorker({ concurrency: 1 });
    const waiting = await waitFor(async () => {
      const current = await engine.getWorkflow(workflow.id);
      const delivered = await query(
        database().url,
        `select 1 from causeway_outbox where state = 'delivered' and task_id = $1`,
        [current?.tasks[0]?.id],
      );
      return current?.tasks[0]?.state === 'awaiting_receipt' && delivered.length === 1
        ? current
        : undefined;
    });
    const taskId = waiting.tasks[0]?.id as string;
    const first = await engine.recordReceipt(taskId, { ok: true });
    const second = await engine.recordReceipt(taskId, { ok: true });
    await worker.stop();
    expect(first).toMatchObject({ state: 'succeeded', changed: true });
    expect(second).toMatchObject({ state: 'succeeded', changed: false });
    expect(platform?.stats().postsPublished).toBe(1);
  });
});

describe('a cancel after the submission was accepted (R14)', () => {
  it('answers that it came too late, records who asked, and the explanation says so', async () => {
    const engine = await engineWithPlatform({ confirm: 'receipt' });
    const { workflow } = await engine.submit('outbox-publish', { noteId: 'late', version: 1 });
    const worker = await engine.startWorker({ concurrency: 1, outbox: false });
    const waiting = await waitFor(async () => {
      const current = await engine.getWorkflow(workflow.id);
      return current?.tasks[0]?.state === 'awaiting_receipt' ? current : undefined;
    });
    // While the message is not delivered yet, the task is "submitted, sending", never failed.
    expect(waiting.tasks[0]).toMatchObject({
      sending: true,
      outbox: [{ state: 'pending', channel: 'platform' }],
    });
    const taskId = waiting.tasks[0]?.id as string;
    const answer = await engine.cancelTask(taskId, { operator: 'alice' });
    expect(answer).toMatchObject({
      state: 'awaiting_receipt',
      changed: false,
      refusal: 'effect_already_submitted',
      reason: 'submitted_awaiting_receipt',
    });
    const again = await engine.cancelWorkflow(workflow.id, { operator: 'bob' });
    expect(again.changed).toBe(false);
    await engine.recordReceipt(taskId, { ok: true });
    await worker.stop();
    const done = await engine.getWorkflow(workflow.id);
    expect(done?.state).toBe('succeeded');
    expect(done?.tasks[0]).toMatchObject({ cancelAskedBy: 'operator:alice' });
    const explanation = await engine.explain(workflow.id);
    expect(explanation.text).toContain(
      'cancel asked by operator:alice after the submission was accepted: the cancel came too late',
    );
    expect(explanation.summary).toBe('publish succeeded');
  });
});
