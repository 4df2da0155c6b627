import type { Engine, TaskView } from '@causeway/engine';
import { awaitReceipt, defineWorkflow, type StepContext, step } from '@causeway/workflow';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Platform, type Receipt, startPlatform } from '../../examples/platform/server';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { edges, waitForWorkflowState } from './fixtures/parent';
import { callPlatform } from './fixtures/platform-client';

/**
 * Cancel after submit (issue 4, rules R13, R14, R15, R23): once the platform accepted the
 * post, a cancel cannot catch it. The task ends `succeeded` or `awaiting_receipt` with
 * `cancel_after_submit` (or, already awaiting its receipt, stays there and the ask is
 * recorded), and the explanation says the cancel came too late.
 */

const database = useTestDatabase();
let platform: Platform | undefined;
afterEach(async () => {
  await platform?.close();
  platform = undefined;
});

const input = z.object({
  noteId: z.string(),
  platformUrl: z.url(),
  /** Return awaitReceipt (the platform settles later) instead of the post. */
  waitForReceipt: z.boolean(),
  /** Stop after the platform accepted, until the test has cancelled. */
  pause: z.boolean(),
});
type Input = z.output<typeof input>;

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** The test's side of a paused step: when it was accepted, and the gate that lets it go on. */
interface Pause {
  readonly accepted: ReturnType<typeof deferred<StepContext<Input>>>;
  readonly gate: ReturnType<typeof deferred<void>>;
}

function publishWorkflow(pauses: Map<string, Pause>) {
  return defineWorkflow({
    name: 'cancel-after-submit',
    input,
    steps: {
      publish: step<Input>({
        reentrant: false,
        maxAttempts: 2,
        run: async (ctx) => {
          await ctx.boundary(); // a cancel before this point would be confirmed here (R13)
          const { body } = await callPlatform(`${ctx.input.platformUrl}/posts`, {
            idempotencyKey: ctx.idempotencyKey,
            body: {
              noteId: ctx.input.noteId,
              version: 1,
              title: 'Note',
              html: '<p>hi</p>',
              reference: ctx.taskId,
            },
          });
          await ctx.recordEvidence(String(body.acceptanceId));
          const pause = pauses.get(ctx.input.noteId);
          if (ctx.input.pause && pause !== undefined) {
            pause.accepted.resolve(ctx);
            // The signal is aborted by the cancel; the submission is out, so the step goes on.
            await pause.gate.promise;
          }
          if (ctx.input.waitForReceipt) {
            return awaitReceipt({ receiptId: String(body.receiptId), timeoutMs: 60_000 });
          }
          return { postId: body.id };
        },
      }),
    },
  });
}

async function setup(options: { receipts: boolean }) {
  const url = database().url;
  const pauses = new Map<string, Pause>();
  let engine: Engine | undefined;
  platform = await startPlatform({
    // With receipts, every post is accepted (202) and settled only by platform.settle().
    ...(options.receipts ? { endpoints: { publishPost: { receipt: { hold: true } } } } : {}),
    callback: async (receipt: Receipt) => {
      await (engine as Engine).recordReceipt(receipt.reference as string, { ok: true });
    },
  });
  engine = testEngine(url, { workflows: [publishWorkflow(pauses)], pollIntervalMs: 50 });
  await engine.migrate();
  return { engine, url, pauses, platform };
}

/** Runs a paused publish up to "accepted by the platform", cancels it there as alice, lets it go on. */
async function cancelWhileSubmitted(
  engine: Engine,
  pauses: Map<string, Pause>,
  live: Platform,
  options: { noteId: string; waitForReceipt: boolean },
) {
  const pause: Pause = { accepted: deferred<StepContext<Input>>(), gate: deferred<void>() };
  pauses.set(options.noteId, pause);
  const { workflow } = await engine.submit('cancel-after-submit', {
    noteId: options.noteId,
    platformUrl: live.url,
    waitForReceipt: options.waitForReceipt,
    pause: true,
  });
  const worker = await engine.startWorker({ concurrency: 1 });
  const ctx = await pause.accepted.promise;
  expect(live.stats().posts).toHaveLength(1);

  const answer = await engine.cancelTask(ctx.taskId, { operator: 'alice' });
  expect(answer).toMatchObject({ state: 'cancel_requested', changed: true });
  pause.gate.resolve();
  return { workflowId: workflow.id, taskId: ctx.taskId, worker };
}

describe('cancel after the platform accepted the submission (R14)', () => {
  it('the step completes: succeeded with cancel_after_submit, and explain says the cancel came too late', async () => {
    const { engine, url, pauses, platform } = await setup({ receipts: false });
    const { workflowId, worker } = await cancelWhileSubmitted(engine, pauses, platform, {
      noteId: 'late-1',
      waitForReceipt: false,
    });
    const task = await waitForWorkflowState(engine, workflowId, 'succeeded');
    await worker.stop();

    expect(edges(task)).toEqual([
      { from: null, to: 'queued', reason: 'submitted', actor: 'client', attempt: 0 },
      {
        from: 'queued',
        to: 'leased',
        reason: 'lease_acquired',
        actor: `worker:${engine.holder}`,
        attempt: 1,
      },
      {
        from: 'leased',
        to: 'cancel_requested',
        reason: 'cancel_requested',
        actor: 'operator:alice',
        attempt: 1,
      },
      {
        from: 'cancel_requested',
        to: 'succeeded',
        reason: 'cancel_after_submit',
        actor: `worker:${engine.holder}`,
        attempt: 1,
      },
    ]);
    expect(task.output).toEqual({ postId: platform.stats().posts[0]?.id });
    expect(platform.stats().postsPublished).toBe(1);
    const text = (await engine.explain(workflowId)).text;
    expect(text).toContain('publish: cancel requested by alice');
    expect(text).toContain('cancel came too late');
    expect(text).toContain('workflow succeeded');
    // R15: asking again answers the same terminal state and why.
    expect(await engine.cancelTask(task.id, { operator: 'alice' })).toMatchObject({
      state: 'succeeded',
      changed: false,
      reason: 'cancel_after_submit',
    });
    expect(await logMismatches(url)).toEqual([]);
  });

  it('the step waits for a receipt: awaiting_receipt with cancel_after_submit, then the receipt confirms it', async () => {
    const { engine, url, pauses, platform } = await setup({ receipts: true });
    const { workflowId, taskId, worker } = await cancelWhileSubmitted(engine, pauses, platform, {
      noteId: 'late-2',
      waitForReceipt: true,
    });
    const waiting = await waitFor(
      async () => {
        const workflow = await engine.getWorkflow(workflowId);
        const task = workflow?.tasks[0];
        return task?.state === 'awaiting_receipt' ? task : undefined;
      },
      { description: 'the task awaiting its receipt' },
    );
    expect(waiting.transitions.at(-1)).toMatchObject({
      from: 'cancel_requested',
      to: 'awaiting_receipt',
      reason: 'cancel_after_submit',
    });
    expect(waiting.leaseHolder).toBeNull();
    expect((await engine.explain(workflowId)).text).toContain(
      'cancel came too late, the effect was already submitted: awaiting receipt',
    );

    // The platform settles the post; its receipt confirms the task.
    const acceptanceId = platform.stats().posts[0]?.acceptanceId as string;
    await platform.settle(acceptanceId);
    const task = await waitForWorkflowState(engine, workflowId, 'succeeded');
    await worker.stop();
    expect(edges(task).map((edge) => edge.reason)).toEqual([
      'submitted',
      'lease_acquired',
      'cancel_requested',
      'cancel_after_submit',
      'receipt_confirmed',
    ]);
    expect(task.id).toBe(taskId);
    expect(platform.stats().postsPublished).toBe(1);
    expect(await logMismatches(url)).toEqual([]);
  });

  it('a cancel while the task awaits its receipt changes nothing, says why, and is recorded for the explanation', async () => {
    const { engine, url, platform } = await setup({ receipts: true });
    const { workflow } = await engine.submit('cancel-after-submit', {
      noteId: 'late-3',
      platformUrl: platform.url,
      waitForReceipt: true,
      pause: false,
    });
    const worker = await engine.startWorker({ concurrency: 1 });
    const waiting = await waitFor(
      async () => {
        const task = (await engine.getWorkflow(workflow.id))?.tasks[0];
        return task?.state === 'awaiting_receipt' ? task : undefined;
      },
      { description: 'the task awaiting its receipt' },
    );

    const first = await engine.cancelTask(waiting.id, { operator: 'bob' });
    expect(first).toMatchObject({
      taskId: waiting.id,
      state: 'awaiting_receipt',
      changed: false,
      refusal: 'effect_already_submitted',
    });
    expect(first.message).toContain('the cancel came too late');
    // R15: idempotent, the same answer again; a workflow cancel cannot stop it either.
    expect(await engine.cancelTask(waiting.id, { operator: 'bob' })).toEqual(first);
    expect(await engine.cancelWorkflow(workflow.id, { operator: 'bob' })).toMatchObject({
      state: 'running',
      changed: false,
    });

    const after = (await engine.getWorkflow(workflow.id))?.tasks[0] as TaskView;
    expect(after.transitions).toEqual(waiting.transitions); // no edge was written
    expect(after.cancelAskedBy).toBe('operator:bob');
    expect(after.cancelAskedAt).toBeInstanceOf(Date);
    expect((await engine.explain(workflow.id)).text).toMatch(
      /publish: cancel asked by operator:bob after the submission was accepted: the cancel came too late/,
    );

    await platform.settle(platform.stats().posts[0]?.acceptanceId as string);
    const task = await waitForWorkflowState(engine, workflow.id, 'succeeded');
    await worker.stop();
    expect(edges(task).map((edge) => edge.reason)).toEqual([
      'submitted',
      'lease_acquired',
      'submitted_awaiting_receipt',
      'receipt_confirmed',
    ]);
    expect(platform.stats().postsPublished).toBe(1);
    expect(await logMismatches(url)).toEqual([]);
  });
});
