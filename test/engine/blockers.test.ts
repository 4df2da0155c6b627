import type { Engine } from '@causeway/engine';
import { type Blocker, type BlockerCode, defineWorkflow, step } from '@causeway/workflow';
import { workflowVersion } from '@causeway/workflow/internal';
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { testEngine } from '../helpers/engine';
import { sentence } from '../helpers/sentences';
import { waitFor } from '../helpers/wait-for';
import {
  blockerWorkflows,
  gateOf,
  type Labelled,
  openAllGates,
  sharedKnown,
  sharedOther,
} from './fixtures/blocker-workflows';

/**
 * Each blocker code reached by driving a real engine into its situation (issue 18): the code,
 * the facts as the task row and its log say them, `until`, and the sentence's facts.
 */
const database = useTestDatabase();
const url = () => database().url;

const engineOf = (options: { leaseMs?: number } = {}) =>
  testEngine(url(), { workflows: blockerWorkflows, ...options });

beforeAll(async () => {
  const setup = engineOf();
  await setup.migrate();
  await setup.close();
});

afterEach(openAllGates);

let labels = 0;
/** A fresh label, so each test's gates and event keys are its own. */
const label = () => `l${++labels}`;

async function blockerOf(engine: Engine, workflowId: string, step: string) {
  const blockers = await engine.blockers(workflowId);
  if (blockers === undefined) throw new Error(`no workflow ${workflowId}`);
  return blockers.find((blocker) => blocker.step === step);
}

/** Waits until the step's blocker has `code`, and returns it. */
function blockerWith(
  engine: Engine,
  workflowId: string,
  stepName: string,
  code: BlockerCode,
): Promise<Blocker> {
  let last: Blocker | undefined;
  return waitFor(
    async () => {
      last = await blockerOf(engine, workflowId, stepName);
      return last?.code === code ? last : undefined;
    },
    { timeoutMs: 10_000, description: `${stepName} ${code} (last: ${JSON.stringify(last)})` },
  );
}

async function taskOf(engine: Engine, workflowId: string, stepName: string) {
  const workflow = await engine.getWorkflow(workflowId);
  const task = workflow?.tasks.find((candidate) => candidate.step === stepName);
  if (task === undefined) throw new Error(`no task ${stepName} in ${workflowId}`);
  return task;
}

describe('blockers of a real engine', () => {
  it('upstream_pending names the unfinished upstream step; running names the live holder', async () => {
    const engine = engineOf();
    await engine.startWorker({ queues: ['blk-first'], concurrency: 1 });
    const { workflow } = await engine.submit('blk-chain', { label: label() });
    const running = await blockerWith(engine, workflow.id, 'first', 'running');
    const first = await taskOf(engine, workflow.id, 'first');
    const leased = first.transitions.at(-1);
    expect(leased?.reason).toBe('lease_acquired');
    expect(running).toMatchObject({
      taskId: first.id,
      until: null,
      facts: {
        holder: engine.holder,
        since: leased?.at.toISOString(),
        attempt: 1,
        maxAttempts: 3,
      },
    });
    expect(running.message).toContain(`first: running on ${engine.holder} since `);
    expect(running.message).toContain('attempt 1 of 3; the worker renews its lease');

    const second = await blockerOf(engine, workflow.id, 'second');
    expect(second).toMatchObject({
      code: 'upstream_pending',
      until: null,
      facts: { upstream: [{ step: 'first', state: 'leased' }] },
      message: 'second: waiting for upstream step first (leased)',
    });
    // One blocker per non-terminal task, in step order.
    expect((await engine.blockers(workflow.id))?.map((blocker) => blocker.step)).toEqual([
      'first',
      'second',
    ]);
  });

  it('not_due by backoff: a retryable failure, with the error it retries after', async () => {
    const engine = engineOf();
    await engine.startWorker({ queues: ['blk-throttled'], concurrency: 1 });
    const { workflow } = await engine.submit('blk-throttled', { label: label() });
    const blocker = await blockerWith(engine, workflow.id, 'call', 'not_due');
    const task = await taskOf(engine, workflow.id, 'call');
    const retry = task.transitions.at(-1);
    expect(retry?.reason).toBe('retry_scheduled');
    const runAt = task.runAt as Date;
    // R51: a throttled retry is due exactly at its Retry-After of ten minutes, no backoff.
    expect(runAt.getTime() - (retry?.at.getTime() ?? 0)).toBe(600_000);
    expect(blocker).toMatchObject({
      until: runAt,
      facts: {
        cause: 'backoff',
        runAt: runAt.toISOString(),
        attempt: 1,
        errorCategory: 'throttled',
        errorSummary: 'platform said slow down',
        retryAfterMs: 600_000,
      },
    });
    expect(blocker.message).toMatch(
      sentence(
        'call: queued, due <time> (in <n> min): retry when the step asked, 10 min after attempt 1 of 4 failed (throttled: platform said slow down)',
      ),
    );
  });

  it('not_due by a step delay, a submit delay and a submit start time', async () => {
    const engine = engineOf();
    const { workflow } = await engine.submit(
      'blk-delayed',
      { label: label() },
      {
        delayMs: 7_200_000,
      },
    );
    const delayedSubmit = await blockerOf(engine, workflow.id, 'quick');
    expect(delayedSubmit).toMatchObject({ code: 'not_due', facts: { cause: 'delay' } });
    expect(delayedSubmit?.message).toContain('delayed 2 h after acceptance');
    const runAt = new Date(Date.now() + 3 * 3_600_000);
    const scheduled = await engine.submit('blk-delayed', { label: label() }, { runAt });
    expect(await blockerOf(engine, scheduled.workflow.id, 'quick')).toMatchObject({
      code: 'not_due',
      until: runAt,
      facts: { cause: 'scheduled', runAt: runAt.toISOString() },
      message: expect.stringContaining('submitted to start then'),
    });

    await engine.startWorker({ queues: ['blk-delayed'], concurrency: 1 });
    const now = await engine.submit('blk-delayed', { label: label() });
    const blocker = await blockerWith(engine, now.workflow.id, 'later', 'not_due');
    const later = await taskOf(engine, now.workflow.id, 'later');
    const promoted = later.transitions.at(-1);
    expect(promoted?.reason).toBe('upstream_succeeded');
    expect(later.runAt?.getTime()).toBe((promoted?.at.getTime() ?? 0) + 3_600_000);
    expect(blocker).toMatchObject({
      until: later.runAt,
      facts: { cause: 'delay', runAt: later.runAt?.toISOString() },
    });
    expect(blocker.message).toMatch(
      sentence('later: queued, due <time> (in 59 min): delayed 1 h after its upstream steps'),
    );
  });

  it('not_due by a snooze, with the reason the step gave', async () => {
    const engine = engineOf();
    await engine.startWorker({ queues: ['blk-snoozing'], concurrency: 1 });
    const { workflow } = await engine.submit('blk-snoozing', { label: label() });
    const blocker = await blockerWith(engine, workflow.id, 'poll', 'not_due');
    const task = await taskOf(engine, workflow.id, 'poll');
    expect(task.transitions.at(-1)?.reason).toBe('snoozed');
    expect(blocker).toMatchObject({
      until: task.runAt,
      facts: { cause: 'snooze', reason: 'platform still rendering', attempt: 0 },
    });
    expect(blocker.message).toMatch(
      sentence(
        'poll: snoozed until <time> (in <n> min): platform still rendering (the attempt is not counted)',
      ),
    );
  });

  it('no_worker: no live worker serves the queue, and which workers exist', async () => {
    const engine = engineOf();
    const { workflow } = await engine.submit('blk-unserved', { label: label() });
    expect(await blockerOf(engine, workflow.id, 'orphan')).toMatchObject({
      code: 'no_worker',
      until: null,
      facts: { queue: 'blk-nobody', workflow: 'blk-unserved', step: 'orphan', workers: [] },
      message: expect.stringContaining(
        'but no live worker serves queue "blk-nobody" (no live worker is registered)',
      ),
    });
    await engine.startWorker({ queues: ['blk-first', 'blk-second'], concurrency: 2 });
    const blocker = await blockerOf(engine, workflow.id, 'orphan');
    expect(blocker?.facts.workers).toEqual([
      {
        holder: engine.holder,
        queues: ['blk-first', 'blk-second'],
        workflows: blockerWorkflows.map((definition) => definition.name),
        versions: blockerWorkflows.map((each) => `${each.name}@${workflowVersion(each)}`),
      },
    ]);
    expect(blocker?.message).toContain(
      `no live worker serves queue "blk-nobody" (live workers: ${engine.holder} serves blk-first, blk-second)`,
    );
  });

  it('no_worker: workers serve the queue but do not define the workflow, or not its version', async () => {
    // Engine A accepts both workflows and runs no worker; B runs the queue but defines only
    // one of them, then C runs an older version of the other, without its step `work` (R54).
    const a = engineOf();
    const b = testEngine(url(), { workflows: [sharedKnown] });
    await b.startWorker({ queues: ['blk-shared'], concurrency: 1 });
    const known = await a.submit('blk-shared-known', { label: label() });
    await waitFor(async () => (await a.getWorkflow(known.workflow.id))?.state === 'succeeded', {
      description: 'B runs the workflow it defines',
    });
    const { workflow } = await a.submit('blk-shared-other', { label: label() });
    const blocker = await blockerOf(a, workflow.id, 'work');
    expect(blocker).toMatchObject({
      code: 'no_worker',
      facts: {
        queue: 'blk-shared',
        workflow: 'blk-shared-other',
        workers: [{ holder: b.holder, queues: ['blk-shared'], workflows: ['blk-shared-known'] }],
      },
    });
    const needed = workflowVersion(sharedOther);
    expect(blocker?.facts.version).toBe(needed);
    expect(blocker?.message).toContain(
      `no live worker serving queue "blk-shared" defines version "${needed}" of workflow blk-shared-other (${b.holder} defines blk-shared-known@${workflowVersion(sharedKnown)})`,
    );

    const older = defineWorkflow({
      name: 'blk-shared-other',
      input: z.object({ label: z.string() }),
      steps: { old: step<Labelled>({ queue: 'blk-shared', run: () => 'old' }) },
    });
    const c = testEngine(url(), { workflows: [older] });
    await c.startWorker({ queues: ['blk-shared'], concurrency: 1 });
    const lacking = await blockerOf(a, workflow.id, 'work');
    expect(lacking?.code).toBe('no_worker');
    expect(lacking?.message).toContain(
      `${c.holder} defines blk-shared-other@${workflowVersion(older)}`,
    );
    expect((await taskOf(a, workflow.id, 'work')).state).toBe('queued');
  });

  it('queue_full: the only slot of the queue is busy while another task is due', async () => {
    const engine = engineOf();
    await engine.startWorker({ queues: ['blk-narrow'], concurrency: 1, prefetch: 0 });
    const first = label();
    const busy = await engine.submit('blk-narrow', { label: first });
    await blockerWith(engine, busy.workflow.id, 'slot', 'running');
    const waiting = await engine.submit('blk-narrow', { label: label() });
    const blocker = await blockerWith(engine, waiting.workflow.id, 'slot', 'queue_full');
    const task = await taskOf(engine, waiting.workflow.id, 'slot');
    expect(task.state).toBe('queued');
    expect(blocker).toMatchObject({
      until: null,
      facts: {
        queue: 'blk-narrow',
        workers: 1,
        slots: 1,
        leased: 1,
        oldestReadyAt: task.runAt?.toISOString(),
        readySince: task.runAt?.toISOString(),
      },
    });
    expect(blocker.message).toContain(
      'but all 1 slot of queue "blk-narrow" on the 1 live worker that can run it are busy (1 leased)',
    );
    // The slot frees up: the waiting task runs.
    gateOf(first).open();
    await blockerWith(engine, waiting.workflow.id, 'slot', 'running');
  });

  it('claimable: a live worker has a free slot, while a transaction holds the workflow row', async () => {
    const engine = engineOf();
    const { workflow } = await engine.submit('blk-claimable', { label: label() });
    // Claims skip a workflow another transaction holds (SKIP LOCKED): the task stays due.
    const client = new pg.Client({ connectionString: url() });
    await client.connect();
    try {
      await client.query('begin');
      await client.query('select 1 from causeway_workflows where id = $1 for update', [
        workflow.id,
      ]);
      await engine.startWorker({ queues: ['blk-claim'], concurrency: 2 });
      const task = await taskOf(engine, workflow.id, 'take');
      const blocker = await blockerOf(engine, workflow.id, 'take');
      expect(blocker).toMatchObject({
        code: 'claimable',
        until: null,
        facts: { queue: 'blk-claim', readySince: task.runAt?.toISOString(), freeSlots: 2 },
      });
      expect(blocker?.message).toContain(
        `${engine.holder} serves queue "blk-claim" with 2 free slots: the next claim takes it`,
      );
      expect(task.state).toBe('queued');
    } finally {
      await client.query('rollback');
      await client.end();
    }
    await waitFor(async () => (await engine.getWorkflow(workflow.id))?.state === 'succeeded', {
      description: 'the next claim takes it',
    });
    expect(await engine.blockers(workflow.id)).toEqual([]);
  });

  it('awaiting_receipt: since when, until when, and what the receipt timeout then does', async () => {
    const engine = engineOf();
    await engine.startWorker({ queues: ['blk-receipt'], concurrency: 1 });
    const name = label();
    const { workflow } = await engine.submit('blk-receipt', { label: name });
    const blocker = await blockerWith(engine, workflow.id, 'submit', 'awaiting_receipt');
    const task = await taskOf(engine, workflow.id, 'submit');
    const submitted = task.transitions.at(-1);
    expect(submitted?.reason).toBe('submitted_awaiting_receipt');
    expect(blocker).toMatchObject({
      until: task.receiptDeadlineAt,
      facts: {
        since: submitted?.at.toISOString(),
        timeoutAt: task.receiptDeadlineAt?.toISOString(),
        sending: [],
      },
    });
    // What the machine's receipt_timeout does to a step that is not reentrant.
    expect(blocker.facts.then).toBe('dead');
    expect(blocker.message).toMatch(
      sentence(
        `submit: effect submitted at <time> (<n> s ago), awaiting its receipt rcpt-${name}; if none comes by <time>, the sweeper marks it dead (receipt_timeout)`,
      ),
    );
  });

  it('waiting_for_event: the event, its key, since when and when it gives up; and who sweeps', async () => {
    const engine = engineOf();
    const key = label();
    const { workflow } = await engine.submit('blk-approval', { label: key });
    const task = await taskOf(engine, workflow.id, 'approve');
    const blocker = await blockerOf(engine, workflow.id, 'approve');
    expect(blocker).toMatchObject({
      code: 'waiting_for_event',
      until: task.waitTimeoutAt,
      facts: {
        name: 'blk.approved',
        key,
        since: task.waitSince?.toISOString(),
        timeoutAt: task.waitTimeoutAt?.toISOString(),
      },
    });
    expect(blocker?.facts.then).toBe('dead');
    expect(blocker?.message).toMatch(
      sentence(
        `approve: waiting for blk.approved (key ${key}) since <time> (<n> s), gives up <time>: then it ends dead (event_timeout); but no live worker runs the sweeper, so nothing acts on it until one starts`,
      ),
    );
    // A worker that sweeps is now live: nothing is missing for the timeout.
    await engine.startWorker({ queues: ['blk-first'], concurrency: 1 });
    expect((await blockerOf(engine, workflow.id, 'approve'))?.message).not.toContain('sweeper');
  });

  it('cancel_pending: a cancel requested while the handler runs, and what lease expiry then does', async () => {
    const engine = engineOf({ leaseMs: 60_000 });
    await engine.startWorker({ queues: ['blk-hold'], concurrency: 1 });
    const { workflow } = await engine.submit('blk-holding', { label: label() });
    await blockerWith(engine, workflow.id, 'hold', 'running');
    const taskId = (await taskOf(engine, workflow.id, 'hold')).id;
    const answer = await engine.cancelTask(taskId, { operator: 'alice', reason: 'wrong version' });
    expect(answer.state).toBe('cancel_requested');
    const task = await taskOf(engine, workflow.id, 'hold');
    const requested = task.transitions.at(-1);
    const blocker = await blockerOf(engine, workflow.id, 'hold');
    expect(blocker).toMatchObject({
      code: 'cancel_pending',
      until: task.leaseExpiresAt,
      facts: {
        holder: engine.holder,
        requestedAt: requested?.at.toISOString(),
        requestedBy: 'operator:alice',
        leaseExpiresAt: task.leaseExpiresAt?.toISOString(),
        reason: 'lease_expired',
      },
    });
    // Nothing started (no boundary): lease expiry confirms the cancel.
    expect(blocker?.facts.then).toBe('cancel');
    expect(blocker?.message).toContain(`hold: cancel requested (by alice: "wrong version") at `);
    expect(blocker?.message).toContain(
      `; ${engine.holder} has not reached a boundary yet (attempt 1); the lease is no longer renewed: unless the step confirms the cancel or finishes first, at `,
    );
    expect(blocker?.message).toMatch(
      /the sweeper cancels it \(lease_expired: no effect started\)$/,
    );
  });

  it('answers undefined for an unknown workflow, and refuses an id that is not one', async () => {
    const engine = engineOf();
    expect(await engine.blockers('00000000-0000-4000-8000-000000000000')).toBeUndefined();
    // As getWorkflow: an id that cannot name a workflow is one no workflow has.
    await expect(engine.blockers('not-a-uuid')).rejects.toMatchObject({ code: 'not_found' });
  });
});
