import { httpChannel, type TaskView } from '@causeway/engine';
import { afterEach, describe, expect, it } from 'vitest';
import type { Receipt } from '../../examples/platform/server';
import { type Platform, startPlatform } from '../../examples/platform/server';
import { isMessage } from '../engine/fixtures/children';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { hangAfterSend, hangBeforeSend, outboxCrashPublish } from './fixtures/effect-workflows';
import { edges, spawnEffectsWorker, waitForWorkflowState } from './fixtures/parent';

/**
 * The outbox dispatcher dies (issue 4, rules R22, R23): a child worker process commits the
 * `awaiting_receipt` edge with its outbox row, its dispatcher takes the row and is SIGKILLed
 * before sending (or after sending, before recording the delivery). Another process with the
 * real HTTP channel sends it once the taken row's visibility timeout has passed: the platform
 * ends with exactly one post per message. A receipt delivered twice changes nothing the
 * second time.
 */

const database = useTestDatabase();
const leaseMs = 800;
/** The dispatcher's visibility timeout (packages/engine/src/runtime/outbox-dispatcher.ts). */
const visibilityMs = 30_000;

let platform: Platform | undefined;
afterEach(async () => {
  await platform?.close();
  platform = undefined;
  await setDatabaseClockOffset(database().url, 0);
});

interface OutboxRow extends Record<string, unknown> {
  id: string;
  state: string;
  attempts: number;
  visible: boolean;
}

async function outboxRow(url: string, taskId: string): Promise<OutboxRow | undefined> {
  const [row] = await query<OutboxRow>(
    url,
    `select id, state, attempts, next_attempt_at <= causeway_now() as visible
       from causeway_outbox where task_id = $1`,
    [taskId],
  );
  return row;
}

async function deliveries(url: string, outboxId: string) {
  return query(
    url,
    `select attempt, outcome, status_code, holder from causeway_outbox_deliveries
      where outbox_id = $1 order by id`,
    [outboxId],
  );
}

describe('outbox: the dispatcher is killed between commit and send (R22)', () => {
  it('a restarted process sends each message exactly once, with the outbox id as idempotency key', async () => {
    platform = await startPlatform({});
    const url = database().url;
    const engine = testEngine(url, {
      leaseMs,
      pollIntervalMs: 100,
      workflows: [outboxCrashPublish],
      // The restarted side has the real HTTP channel under both names.
      channels: [hangBeforeSend, hangAfterSend].map((name) =>
        httpChannel({
          name,
          url: `${(platform as Platform).url}/posts`,
          confirm: 'response',
          timeoutMs: 2_000,
        }),
      ),
    });
    await engine.migrate();

    const child = spawnEffectsWorker({
      databaseUrl: url,
      platformUrl: platform.url,
      leaseMs,
      outboxLater: true,
    });
    const { holder: childHolder } = await child.ready(60_000);
    const ids = new Map<string, { workflowId: string; taskId: string }>();
    for (const channel of [hangBeforeSend, hangAfterSend]) {
      const { workflow } = await engine.submit('outbox-crash-publish', {
        noteId: `note-${channel}`,
        channel,
      });
      const task = await waitForWorkflowState(engine, workflow.id, 'running', child.output);
      await waitFor(async () => (await outboxRow(url, task.id))?.state === 'pending', {
        description: `the ${channel} message committed with its edge`,
      });
      ids.set(channel, { workflowId: workflow.id, taskId: task.id });
    }
    // Both edges committed with their messages; now the child's dispatcher takes both at once.
    child.process.send({ type: 'start-outbox' });
    for (const [channel, { workflowId }] of ids) {
      const reached = await child.waitForMessage(
        isMessage('reached', (message) => message.workflowId === workflowId),
        { description: `the child's dispatcher taking the message on ${channel}` },
      );
      expect(reached.where).toBe(`deliver:${channel}`);
      expect(reached.attempt).toBe(1);
    }
    // Only the after-send channel reached the platform before the kill.
    expect(platform.stats().postsPublished).toBe(1);
    expect(platform.stats().requests.publishPost).toEqual({ '201': 1 });
    const exit = await child.kill();
    expect(exit.signal).toBe('SIGKILL');

    const before = new Map<string, OutboxRow>();
    for (const [channel, { workflowId, taskId }] of ids) {
      const workflow = await engine.getWorkflow(workflowId);
      const task = workflow?.tasks[0] as TaskView;
      // The edge committed with its message: submitted, sending — never "failed".
      expect(task, channel).toMatchObject({ state: 'awaiting_receipt', sending: true });
      expect(task.leaseHolder, channel).toBeNull();
      const row = (await outboxRow(url, taskId)) as OutboxRow;
      // Taken by the dead dispatcher (attempt 1), invisible until its visibility timeout ends.
      expect(row, channel).toMatchObject({ state: 'pending', attempts: 1, visible: false });
      expect(await deliveries(url, row.id), channel).toEqual([]);
      before.set(channel, row);
    }

    const worker = await engine.startWorker({ concurrency: 2 });
    // Past the visibility timeout (database time, R11) the message is due again.
    await setDatabaseClockOffset(url, visibilityMs + 1_000);
    const done = new Map<string, TaskView>();
    for (const [channel, { workflowId }] of ids) {
      done.set(channel, await waitForWorkflowState(engine, workflowId, 'succeeded', child.output));
    }
    await worker.stop();

    const stats = platform.stats();
    // Exactly one post per message: the after-send message's repeat carried the same key.
    expect(stats.postsPublished).toBe(2);
    expect(stats.requests.publishPost).toEqual({ '201': 3 });
    expect(stats.idempotentReplays).toBe(1);
    for (const [channel, task] of done) {
      const row = before.get(channel) as OutboxRow;
      const posts = stats.posts.filter((post) => post.noteId === `note-${channel}`);
      expect(posts, channel).toHaveLength(1);
      expect(posts[0]?.idempotencyKey, channel).toBe(row.id);
      expect(stats.log.filter((entry) => entry.idempotencyKey === row.id)).toHaveLength(
        channel === hangAfterSend ? 2 : 1,
      );
      expect(await outboxRow(url, task.id), channel).toMatchObject({
        id: row.id,
        state: 'delivered',
        attempts: 2,
      });
      // Only the surviving dispatcher's attempt is recorded: the dead one never recorded its own.
      expect(await deliveries(url, row.id), channel).toEqual([
        { attempt: 2, outcome: 'delivered', status_code: 201, holder: engine.holder },
      ]);
      expect(
        edges(task).map((edge) => `${edge.reason}:${edge.actor}`),
        channel,
      ).toEqual([
        'submitted:client',
        `lease_acquired:worker:${childHolder}`,
        `submitted_awaiting_receipt:worker:${childHolder}`,
        `receipt_confirmed:receipt:outbox:${channel}`,
      ]);
      expect(task.sending, channel).toBe(false);
    }
    expect(await logMismatches(url)).toEqual([]);
  }, 60_000);
});

describe('outbox with a receipt contract: a receipt arriving twice is harmless (R23)', () => {
  it('the platform delivers the receipt twice: one receipt_confirmed edge, one post, and the repeat changes nothing', async () => {
    const url = database().url;
    const answers: { state: string; changed: boolean }[] = [];
    let engine: ReturnType<typeof testEngine> | undefined;
    platform = await startPlatform({
      // Every post is settled later, and its receipt is delivered twice.
      endpoints: { publishPost: { receipt: { delayMs: 20, deliveries: 2 } } },
      callback: async (receipt: Receipt) => {
        const answer = await (engine as ReturnType<typeof testEngine>).recordReceipt(
          receipt.reference as string,
          receipt.outcome === 'ok'
            ? { ok: true }
            : { ok: false, category: 'invalid_argument', message: receipt.message ?? 'rejected' },
        );
        answers.push({ state: answer.state, changed: answer.changed });
      },
    });
    engine = testEngine(url, {
      pollIntervalMs: 100,
      workflows: [outboxCrashPublish],
      channels: [
        httpChannel({
          name: 'platform-receipts',
          url: `${platform.url}/posts`,
          confirm: 'receipt',
        }),
      ],
    });
    await engine.migrate();
    const { workflow } = await engine.submit('outbox-crash-publish', {
      noteId: 'twice',
      channel: 'platform-receipts',
    });
    const worker = await engine.startWorker({ concurrency: 1 });
    const task = await waitForWorkflowState(engine, workflow.id, 'succeeded');
    await waitFor(() => (platform as Platform).stats().receiptsDelivered === 2, {
      description: 'both receipt deliveries acknowledged',
    });
    await worker.stop();

    expect(answers).toEqual([
      { state: 'succeeded', changed: true },
      { state: 'succeeded', changed: false },
    ]);
    const final = (await engine.getWorkflow(workflow.id))?.tasks[0] as TaskView;
    expect(edges(final).map((edge) => edge.reason)).toEqual([
      'submitted',
      'lease_acquired',
      'submitted_awaiting_receipt',
      'receipt_confirmed',
    ]);
    expect(final.transitions.at(-1)?.actor).toBe('receipt');
    expect(final).toMatchObject({ id: task.id, state: 'succeeded', sending: false });
    const stats = platform.stats();
    expect(stats.postsPublished).toBe(1);
    expect(stats.requests.publishPost).toEqual({ '202': 1 });
    expect(stats.receipts.map((receipt) => receipt.receiptId)).toEqual([
      stats.receipts[0]?.receiptId,
      stats.receipts[0]?.receiptId,
    ]);
    const outbox = await query(
      url,
      'select state, attempts from causeway_outbox where task_id = $1',
      [task.id],
    );
    expect(outbox).toEqual([{ state: 'delivered', attempts: 1 }]);
    expect(await logMismatches(url)).toEqual([]);
  });
});
