import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import {
  eventSnapshotNow,
  taskListWaitsOfNewEvents,
} from '../../packages/engine/src/db/sweep/waits-of-new-events';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { spawnFixture } from './fixtures/children';
import {
  rollingDigest,
  rollingReview,
  rollingReviewNewer,
} from './fixtures/rolling-event-workflows';

/**
 * R54: a stored event completes every wait it matches, whichever engine received it, within
 * one sweep interval. An engine that lacks the waiting workflow stores the event and leaves
 * the wait; the sweeper of an engine that defines it completes the wait with that event, as a
 * send to it would have: `event_received`, the payload as the output, a delivery row.
 */
const database = useTestDatabase();
const url = () => database().url;

afterEach(async () => {
  await setDatabaseClockOffset(url(), 0);
});

interface ApprovalRow extends Record<string, unknown> {
  state: string;
  output: unknown;
  reason: string;
  actor: string;
  event_id: string | null;
  delivered: string | null;
}

/** The approval step of a review, its last edge and the event delivered to it. */
async function approvalOf(workflowId: string): Promise<ApprovalRow | undefined> {
  const rows = await query<ApprovalRow>(
    url(),
    `select t.state, t.output, last.reason, last.actor, last.detail ->> 'eventId' as event_id,
        (select d.event_id::text from causeway_event_deliveries as d where d.task_id = t.id)
          as delivered
       from causeway_tasks as t
       cross join lateral (select reason, actor, detail from causeway_transitions as l
         where l.workflow_id = t.workflow_id and l.task_id = t.id order by l.id desc limit 1)
         as last
      where t.workflow_id = $1 and t.step = 'approval'`,
    [workflowId],
  );
  return rows[0];
}

/** An engine of the review's service (no worker: it submits and sweeps when told). */
const reviewEngine = () => testEngine(url(), { workflows: [rollingReview] });
/** An engine of the other service: it knows the event name, not the review. */
const digestEngine = () => testEngine(url(), { workflows: [rollingDigest] });

describe('a stored event and the waits its receiving engine could not decide (R54)', () => {
  it("is delivered by the waiting workflow's own engine process within a sweep interval", async () => {
    const reviews = reviewEngine();
    await reviews.migrate();
    const child = spawnFixture('rolling-review-worker.ts', { CAUSEWAY_CHILD_DATABASE_URL: url() });
    await child.ready(60_000);
    const { workflow } = await reviews.submit('rolling-review', { noteId: 'n1' });
    expect((await approvalOf(workflow.id))?.state).toBe('waiting');

    // The approval reaches the engine that lacks the review: it stores it, decides nothing.
    const answer = await digestEngine().sendEvent('rolling.approved', 'n1', {
      approved: true,
      editor: 'ed',
    });
    expect(answer.tasks).toEqual([]);

    // The worker process that defines the review completes the wait (its sweep runs every
    // 100 ms) with the event, and runs the step after it.
    await waitFor(
      async () => (await reviews.getWorkflow(workflow.id))?.state === 'succeeded' || undefined,
      { timeoutMs: 15_000, description: 'the review completed by its own engine' },
    );
    expect(await approvalOf(workflow.id)).toEqual({
      state: 'succeeded',
      output: { approved: true, editor: 'ed' },
      reason: 'event_received',
      actor: 'client',
      event_id: answer.eventId,
      delivered: answer.eventId,
    });
    const publish = (await reviews.getWorkflow(workflow.id))?.tasks.find(
      (task) => task.step === 'publish',
    );
    expect(publish?.output).toEqual({ approvedBy: 'ed' });
    await child.stop();
    expect(await logMismatches(url())).toEqual([]);
  }, 120_000);

  it('wins over the wait’s timeout default when both are due at the sweep (R39)', async () => {
    const reviews = reviewEngine();
    await reviews.migrate();
    const { workflow } = await reviews.submit('rolling-review', { noteId: 'late' });
    await digestEngine().sendEvent('rolling.approved', 'late', { approved: true, editor: 'ann' });
    await setDatabaseClockOffset(url(), 2 * 3_600_000);
    // One pass: the event's edge, and the step after it made ready; no timeout edge.
    expect(await reviews.sweep()).toBe(1);
    expect(await approvalOf(workflow.id)).toMatchObject({
      state: 'succeeded',
      output: { approved: true, editor: 'ann' },
      reason: 'event_received',
    });
  });

  it('takes the first event whose payload the step accepts, never one from before the workflow', async () => {
    const reviews = reviewEngine();
    await reviews.migrate();
    const digests = digestEngine();
    // Before the workflow was accepted: never its event (R37).
    await digests.sendEvent('rolling.approved', 'n2', { approved: false, editor: 'early' });
    const { workflow } = await reviews.submit('rolling-review', { noteId: 'n2' });
    // The other service accepts any payload; the review's schema refuses this one.
    await digests.sendEvent('rolling.approved', 'n2', { approved: 'maybe' });
    const good = await digests.sendEvent('rolling.approved', 'n2', {
      approved: true,
      editor: 'bo',
    });
    await digests.sendEvent('rolling.approved', 'n2', { approved: false, editor: 'later' });
    expect(await reviews.sweep()).toBe(1);
    expect(await approvalOf(workflow.id)).toMatchObject({
      state: 'succeeded',
      output: { approved: true, editor: 'bo' },
      delivered: good.eventId,
    });
    // Once: another pass, and the same event sent again to the review's engine, change nothing.
    expect(await reviews.sweep()).toBe(0);
    const again = await reviews.sendEvent('rolling.approved', 'n2', {
      approved: true,
      editor: 'bo',
    });
    expect(again.tasks).toEqual([]);
    const deliveries = await query<{ n: number }>(
      url(),
      `select count(*)::int as n from causeway_event_deliveries where workflow_id = $1`,
      [workflow.id],
    );
    expect(deliveries).toEqual([{ n: 1 }]);
  });

  it('does not stall behind more than a page of waits it cannot complete', async () => {
    const reviews = reviewEngine();
    await reviews.migrate();
    const digests = digestEngine();
    // More than a page of the sweeper's (200) waits whose events the review refuses, and as
    // many of the other service's own waits (the digest's) with their events stored, all
    // listed before the wait that can be completed.
    const refused = await reviews.submitMany(
      Array.from({ length: 210 }, (_, i) => ({
        name: 'rolling-review',
        input: { noteId: `refused-${i}` },
      })),
    );
    await digests.sendEvents(
      refused.map((_, i) => ({
        name: 'rolling.approved',
        key: `refused-${i}`,
        payload: { approved: 'maybe' },
      })),
    );
    const others = await digests.submitMany(
      Array.from({ length: 210 }, (_, i) => ({
        name: 'rolling-digest',
        input: { noteId: `other-${i}` },
      })),
    );
    await reviews.sendEvents(
      others.map((_, i) => ({
        name: 'rolling.approved',
        key: `other-${i}`,
        payload: { approved: true, editor: 'di' },
      })),
    );
    const completable = await reviews.submit('rolling-review', { noteId: 'last' });
    await digests.sendEvent('rolling.approved', 'last', { approved: true, editor: 'cy' });
    expect(await reviews.sweep()).toBe(1);
    expect((await approvalOf(completable.workflow.id))?.state).toBe('succeeded');
    // The digest's waits are its own engine's to complete.
    expect(await digests.sweep()).toBe(210);
    const still = await query<{ n: number }>(
      url(),
      `select count(*)::int as n from causeway_tasks
        where workflow_id = any($1::uuid[]) and state = 'waiting'`,
      [refused.map((run) => run.workflow.id)],
    );
    expect(still).toEqual([{ n: 210 }]);
  });

  it('leaves a wait of a workflow with a step it does not define to the version that does', async () => {
    const older = reviewEngine();
    await older.migrate();
    const newer = testEngine(url(), { workflows: [rollingReviewNewer] });
    const { workflow } = await newer.submit('rolling-review', { noteId: 'grown' });
    await digestEngine().sendEvent('rolling.approved', 'grown', { approved: true, editor: 'di' });
    // The older version knows the waiting step, not the step the newer one added after it.
    expect(await older.sweep()).toBe(0);
    expect((await approvalOf(workflow.id))?.state).toBe('waiting');
    expect(await newer.sweep()).toBe(1);
    expect((await approvalOf(workflow.id))?.state).toBe('succeeded');
  });

  it("completes missed waits in a worker's later passes, which read only the new events", async () => {
    const reviews = reviewEngine();
    await reviews.migrate();
    const digests = digestEngine();
    const first = await reviews.submit('rolling-review', { noteId: 'before-start' });
    await digests.sendEvent('rolling.approved', 'before-start', { approved: true, editor: 'a' });
    await reviews.startWorker({ concurrency: 1 });
    // The first pass looks at every wait.
    await waitFor(
      async () => (await approvalOf(first.workflow.id))?.state === 'succeeded' || undefined,
      { timeoutMs: 10_000, description: 'the first pass completed the wait' },
    );
    // A later pass finds the wait of an event stored after the first.
    const second = await reviews.submit('rolling-review', { noteId: 'after-start' });
    const answer = await digests.sendEvent('rolling.approved', 'after-start', {
      approved: true,
      editor: 'b',
    });
    await waitFor(
      async () => (await approvalOf(second.workflow.id))?.state === 'succeeded' || undefined,
      { timeoutMs: 10_000, description: 'a later pass completed the wait' },
    );
    expect(await approvalOf(second.workflow.id)).toMatchObject({ delivered: answer.eventId });
  });

  it('reads an event whose transaction commits after a later one, in the pass after', async () => {
    const reviews = reviewEngine();
    await reviews.migrate();
    const early = await reviews.submit('rolling-review', { noteId: 'slow-commit' });
    const late = await reviews.submit('rolling-review', { noteId: 'fast-commit' });
    // A send's transaction that stores its event, then takes long to commit.
    const slow = new pg.Client({ connectionString: url() });
    await slow.connect();
    try {
      await slow.query('begin');
      await slow.query(
        `insert into causeway_events (id, name, key, payload, sent_by, received_at)
         values (gen_random_uuid(), 'rolling.approved', 'slow-commit',
           '{"approved": true, "editor": "slow"}', 'client', causeway_now())`,
      );
      const since = await eventSnapshotNow(reviews.db);
      // A later transaction commits first: read now.
      await digestEngine().sendEvent('rolling.approved', 'fast-commit', {
        approved: true,
        editor: 'fast',
      });
      const read = await taskListWaitsOfNewEvents(reviews.db, since);
      const lateTask = (await reviews.getWorkflow(late.workflow.id))?.tasks[0]?.id;
      expect(read.taskIds).toEqual([lateTask]);
      // The earlier transaction commits: the pass after reads its event, though its id is
      // below the xmax of the snapshot that pass starts from.
      await slow.query('commit');
      const after = await taskListWaitsOfNewEvents(reviews.db, read.snapshot);
      const earlyTask = (await reviews.getWorkflow(early.workflow.id))?.tasks[0]?.id;
      expect(after.taskIds).toEqual([earlyTask]);
      const nothing = await taskListWaitsOfNewEvents(reviews.db, after.snapshot);
      expect(nothing.taskIds).toEqual([]);
      // Both waits are the review's engine's to complete.
      expect(await reviews.sweep()).toBe(2);
    } finally {
      await slow.end();
    }
  });

  it('is left by a send to the version that defines every step of the waiting workflow', async () => {
    const older = reviewEngine();
    await older.migrate();
    const newer = testEngine(url(), { workflows: [rollingReviewNewer] });
    const { workflow } = await newer.submit('rolling-review', { noteId: 'grown-send' });
    // The older version knows the waiting step but not the step after it that the newer one
    // added: had it completed the wait, nobody would make that step ready.
    // One event (the send function), a batch (the statement), and a batch with the key twice
    // (the transaction path): none completes it.
    const event = { name: 'rolling.approved', key: 'grown-send', payload: { approved: true } };
    const answers = [
      await older.sendEvent(event.name, event.key, { ...event.payload, editor: 'one' }),
      ...(await older.sendEvents([
        { ...event, payload: { ...event.payload, editor: 'batch' } },
        { ...event, key: 'nobody-waits', payload: { ...event.payload, editor: 'batch' } },
      ])),
      ...(await older.sendEvents([
        { ...event, payload: { ...event.payload, editor: 'twice' } },
        { ...event, payload: { ...event.payload, editor: 'twice' } },
      ])),
    ];
    expect(answers.map((answer) => answer.tasks)).toEqual([[], [], [], [], []]);
    expect((await approvalOf(workflow.id))?.state).toBe('waiting');
    expect(await newer.sweep()).toBe(1);
    expect(await approvalOf(workflow.id)).toMatchObject({
      output: { approved: true, editor: 'one' },
    });
    const tasks = (await newer.getWorkflow(workflow.id))?.tasks.map((t) => [t.step, t.state]);
    expect(tasks).toEqual([
      ['approval', 'succeeded'],
      ['publish', 'queued'],
      ['notify', 'queued'],
    ]);
  });
});
