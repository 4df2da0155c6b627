import { EngineError } from '@causeway/engine';
import { DefinitionError, event, workflow } from '@causeway/workflow';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { expectLogIsSound, type LogRow, tableCounts as logCounts } from './semantics-support';

/**
 * Event steps (R37–R39): a step that runs no code waits for a named event with a key, and
 * `sendEvent` completes it in the transaction that stores the event. Real PostgreSQL, real
 * workers; database time is moved for timeouts.
 */
const database = useTestDatabase();
const url = () => database().url;

const verdict = z.object({ editor: z.string(), approved: z.boolean() });

const review = workflow({
  name: 'events-review',
  input: z.object({ noteId: z.string() }),
  deadlineMs: 10 * 24 * 3_600_000,
})
  .step('render', { queue: 'q-events', run: (ctx) => ({ html: `<p>${ctx.input.noteId}</p>` }) })
  .event('approval', {
    after: ['render'],
    name: 'note.approved',
    key: (ctx) => `${ctx.input.noteId}:${ctx.results.render.html.length}`,
    payload: verdict,
    timeoutMs: 3 * 24 * 3_600_000,
  })
  .step('publish', {
    after: ['approval'],
    queue: 'q-events',
    run: (ctx) => ({ by: ctx.results.approval.editor, approved: ctx.results.approval.approved }),
  })
  .build();

const defaulted = workflow({ name: 'events-defaulted', input: z.object({ id: z.string() }) })
  .add(
    'wait',
    event({
      name: 'ping.sent',
      key: 'constant-key',
      payload: z.object({ n: z.number() }),
      timeoutMs: 60_000,
      onTimeout: { n: -1 },
    }),
  )
  .build();

const strict = workflow({
  name: 'events-strict',
  input: z.object({ id: z.string() }),
  deadlineMs: 120_000,
})
  .event('wait', { name: 'ping.free', key: (ctx) => ctx.input.id, timeoutMs: 60_000 })
  .build();

const workflows = [review, defaulted, strict];
const engine = () => testEngine(url(), { workflows, sweepIntervalMs: 50 });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

afterEach(async () => {
  await setDatabaseClockOffset(url(), 0);
});

/** Row counts of every table a send may write: workflows, tasks, the log, events, deliveries. */
async function tableCounts(databaseUrl: string) {
  const events = await query<{ events: number; deliveries: number }>(
    databaseUrl,
    `select (select count(*)::int from causeway_events) as events,
            (select count(*)::int from causeway_event_deliveries) as deliveries`,
  );
  return {
    ...(await logCounts(databaseUrl)),
    ...(events[0] as { events: number; deliveries: number }),
  };
}

async function log(workflowId: string): Promise<LogRow[]> {
  return query<LogRow>(
    url(),
    `select id, task_id, step, from_state, to_state, reason, actor, attempt, at, detail
       from causeway_transitions where workflow_id = $1 and task_id is not null order by id`,
    [workflowId],
  );
}

async function task(workflowId: string, step: string) {
  const rows = await query<{
    id: string;
    state: string;
    output: unknown;
    event_name: string | null;
    event_key: string | null;
    wait_since: Date | null;
    wait_timeout_at: Date | null;
    lease_holder: string | null;
  }>(
    url(),
    `select id, state, output, event_name, event_key, wait_since, wait_timeout_at, lease_holder
       from causeway_tasks where workflow_id = $1 and step = $2`,
    [workflowId, step],
  );
  return rows[0];
}

async function workflowState(id: string): Promise<string | undefined> {
  const rows = await query<{ state: string }>(
    url(),
    'select state from causeway_workflows where id = $1',
    [id],
  );
  return rows[0]?.state;
}

describe('an event step (R37, R38)', () => {
  it('waits with no lease, and sendEvent completes it with the payload its downstream reads', async () => {
    const cw = engine();
    const { workflow: run } = await cw.submit('events-review', { noteId: 'n1' });
    const worker = await cw.startWorker({ concurrency: 2 });
    await waitFor(async () => (await workflowState(run.id)) === 'waiting');
    const parked = await task(run.id, 'approval');
    expect(parked).toMatchObject({
      state: 'waiting',
      event_name: 'note.approved',
      event_key: 'n1:9',
      lease_holder: null,
    });
    expect((parked?.wait_timeout_at?.getTime() ?? 0) - (parked?.wait_since?.getTime() ?? 0)).toBe(
      3 * 24 * 3_600_000,
    );
    const explained = await cw.explain(run.id);
    expect(explained.summary).toContain('approval waiting for note.approved (key n1:9) since');
    expect(explained.text).toMatch(/gives up \w{3} \d{4}-\d{2}-\d{2} /);

    const answer = await cw.sendEvent('note.approved', 'n1:9', { editor: 'ada', approved: true });
    expect(answer.deduplicated).toBe(false);
    expect(answer.tasks).toEqual([
      { taskId: parked?.id, workflowId: run.id, step: 'approval', state: 'succeeded' },
    ]);
    await waitFor(async () => (await workflowState(run.id)) === 'succeeded');
    await worker.stop();
    expect((await task(run.id, 'publish'))?.output).toEqual({ by: 'ada', approved: true });
    const received = (await log(run.id)).find((row) => row.reason === 'event_received');
    expect(received).toMatchObject({
      from_state: 'waiting',
      to_state: 'succeeded',
      actor: 'client',
    });
    expect(received?.detail).toEqual({ eventId: answer.eventId });
    await expectLogIsSound(url());
    await cw.close();
  });

  it('is completed by an event that arrived while its upstream step still ran', async () => {
    const cw = engine();
    const { workflow: run } = await cw.submit('events-review', { noteId: 'early' });
    const early = await cw.sendEvent('note.approved', 'early:12', {
      editor: 'bo',
      approved: false,
    });
    expect(early.tasks).toEqual([]);
    const worker = await cw.startWorker({ concurrency: 2 });
    await waitFor(async () => (await workflowState(run.id)) === 'succeeded');
    await worker.stop();
    const rows = await log(run.id);
    const approval = rows.filter((row) => row.step === 'approval').map((row) => row.reason);
    expect(approval).toEqual(['submitted', 'event_awaited', 'event_received']);
    expect((await task(run.id, 'publish'))?.output).toEqual({ by: 'bo', approved: false });
    const delivered = await query<{ task_id: string }>(
      url(),
      'select task_id from causeway_event_deliveries where event_id = $1',
      [early.eventId],
    );
    expect(delivered).toEqual([{ task_id: (await task(run.id, 'approval'))?.id }]);
    await cw.close();
  });

  it('ignores an event sent before its workflow was accepted', async () => {
    const cw = engine();
    await cw.sendEvent('ping.free', 'before', { any: 'thing' });
    const { workflow: run } = await cw.submit('events-strict', { id: 'before' });
    expect((await task(run.id, 'wait'))?.state).toBe('waiting');
    const later = await cw.sendEvent('ping.free', 'before', { second: true });
    expect(later.tasks.map((entry) => entry.state)).toEqual(['succeeded']);
    expect((await task(run.id, 'wait'))?.output).toEqual({ second: true });
    await cw.close();
  });

  it('is idempotent by the idempotency key: a repeat writes nothing and answers the first send', async () => {
    const cw = engine();
    const { workflow: run } = await cw.submit('events-strict', { id: 'idem' });
    const first = await cw.sendEvent('ping.free', 'idem', 1, { idempotencyKey: 'k-1' });
    const before = await tableCounts(url());
    const again = await cw.sendEvent('ping.free', 'idem', 1, { idempotencyKey: 'k-1' });
    expect(again).toEqual({ ...first, deduplicated: true });
    expect(await tableCounts(url())).toEqual(before);
    expect((await task(run.id, 'wait'))?.state).toBe('succeeded');
    await cw.close();
  });
});

describe('sendEvents: a batch in one transaction (R38)', () => {
  it('completes each wait, answers in order, and refuses the whole batch for one bad event', async () => {
    const cw = engine();
    const first = await cw.submit('events-strict', { id: 'batch-1' });
    const second = await cw.submit('events-strict', { id: 'batch-2' });
    const before = await tableCounts(url());
    const refused = await cw
      .sendEvents([
        { name: 'ping.free', key: 'batch-1', payload: 1 },
        { name: 'ping.free', key: '', payload: 2 },
      ])
      .catch((error) => error);
    expect(refused).toMatchObject({ code: 'invalid_event_key', details: { index: 1 } });
    expect(await tableCounts(url())).toEqual(before);
    const answers = await cw.sendEvents([
      { name: 'ping.free', key: 'batch-1', payload: 'one', idempotencyKey: 'b-1' },
      { name: 'ping.free', key: 'batch-2', payload: 'two' },
      { name: 'ping.free', key: 'batch-1', payload: 'one', idempotencyKey: 'b-1' },
      { name: 'ping.free', key: 'nobody', payload: 'kept' },
    ]);
    expect(answers.map((answer) => [answer.deduplicated, answer.tasks.length])).toEqual([
      [false, 1],
      [false, 1],
      [true, 1],
      [false, 0],
    ]);
    expect(answers[2]?.eventId).toBe(answers[0]?.eventId);
    expect((await task(first.workflow.id, 'wait'))?.output).toBe('one');
    expect((await task(second.workflow.id, 'wait'))?.output).toBe('two');
    expect((await tableCounts(url())).events).toBe(before.events + 3);
    await cw.close();
  });
});

describe('a wait that ends without its event (R39)', () => {
  it('succeeds with onTimeout after its timeout, by the sweeper', async () => {
    const cw = engine();
    const { workflow: run } = await cw.submit('events-defaulted', { id: 'd' });
    await setDatabaseClockOffset(url(), 61_000);
    await cw.sweep();
    expect(await task(run.id, 'wait')).toMatchObject({ state: 'succeeded', output: { n: -1 } });
    const last = (await log(run.id)).at(-1);
    expect(last).toMatchObject({ reason: 'event_timeout', to_state: 'succeeded' });
    expect(String(last?.actor)).toMatch(/^sweeper:/);
    await cw.close();
  });

  it('ends dead without onTimeout; a replay waits again, with a fresh timeout', async () => {
    const cw = engine();
    const { workflow: run } = await cw.submit('events-strict', { id: 'late' });
    expect(await cw.sweep()).toBe(0);
    await setDatabaseClockOffset(url(), 61_000);
    await cw.sweep();
    const dead = await task(run.id, 'wait');
    expect(dead?.state).toBe('dead');
    expect((await log(run.id)).at(-1)).toMatchObject({ reason: 'event_timeout', to_state: 'dead' });
    const replayed = await cw.replayTask(dead?.id as string, {
      operator: 'ops',
      reason: 'ask again',
    });
    expect(replayed).toMatchObject({ state: 'waiting', reason: 'manual_replay' });
    const waiting = await task(run.id, 'wait');
    expect((waiting?.wait_timeout_at?.getTime() ?? 0) - (waiting?.wait_since?.getTime() ?? 0)).toBe(
      60_000,
    );
    expect((await cw.explain(run.id)).text).toContain('waiting again for ping.free (key late)');
    await cw.sendEvent('ping.free', 'late', 'finally');
    expect(await workflowState(run.id)).toBe('succeeded');
    await expectLogIsSound(url());
    await cw.close();
  });

  it('a replay that takes an event kept for it at once answers the state the call left', async () => {
    const cw = engine();
    const { workflow: run } = await cw.submit('events-strict', { id: 'kept-for-replay' });
    await setDatabaseClockOffset(url(), 61_000);
    await cw.sweep();
    const dead = await task(run.id, 'wait');
    expect(dead?.state).toBe('dead');
    // Nobody waits: the event is kept, and the replayed wait takes it in the replay's transaction.
    const late = await cw.sendEvent('ping.free', 'kept-for-replay', { late: true });
    expect(late.tasks).toEqual([]);
    const replayed = await cw.replayTask(dead?.id as string, { operator: 'ops', reason: 'ask' });
    expect(replayed).toEqual({
      taskId: dead?.id,
      state: 'succeeded',
      changed: true,
      reason: 'event_received',
    });
    expect(await task(run.id, 'wait')).toMatchObject({
      state: 'succeeded',
      output: { late: true },
    });
    expect((await log(run.id)).slice(-2).map((row) => row.reason)).toEqual([
      'manual_replay',
      'event_received',
    ]);
    await cw.close();
  });

  it("ends dead (deadline_exceeded) when the workflow's deadline passes first", async () => {
    const cw = engine();
    const { workflow: run } = await cw.submit('events-strict', { id: 'deadline' });
    // Replayed tasks have no deadline; this one has the workflow's 120 s, longer than its wait.
    await query(
      url(),
      "update causeway_tasks set wait_timeout_at = wait_timeout_at + interval '1 day' where workflow_id = $1",
      [run.id],
    );
    await setDatabaseClockOffset(url(), 121_000);
    await cw.sweep();
    expect((await log(run.id)).at(-1)).toMatchObject({
      from_state: 'waiting',
      to_state: 'dead',
      reason: 'deadline_exceeded',
    });
    await cw.close();
  });

  it('is cancelled by a workflow cancel (cancelled_while_waiting)', async () => {
    const cw = engine();
    const { workflow: run } = await cw.submit('events-strict', { id: 'cancel' });
    const answer = await cw.cancelWorkflow(run.id, { operator: 'ops', reason: 'not needed' });
    expect(answer).toMatchObject({ state: 'cancelled', changed: true });
    expect((await log(run.id)).at(-1)).toMatchObject({
      reason: 'cancelled_while_waiting',
      actor: 'operator:ops',
      detail: { operatorReason: 'not needed' },
    });
    const late = await cw.sendEvent('ping.free', 'cancel', {});
    expect(late.tasks).toEqual([]);
    await cw.close();
  });
});

describe('bad events (R38, R34): a stable code each, nothing written', () => {
  it('refuses an unknown name, a bad key, a payload the schema refuses, too large or unstorable', async () => {
    const cw = engine();
    await cw.submit('events-review', { noteId: 'bad' });
    const before = await tableCounts(url());
    const cases: [string, unknown, unknown, string][] = [
      ['note.unknown', 'k', {}, 'unknown_event'],
      ['Not A Name', 'k', {}, 'unknown_event'],
      ['note.approved', '', { editor: 'a', approved: true }, 'invalid_event_key'],
      ['note.approved', 'x'.repeat(257), { editor: 'a', approved: true }, 'invalid_event_key'],
      ['note.approved', 42, { editor: 'a', approved: true }, 'invalid_event_key'],
      ['note.approved', 'k', { editor: 'a' }, 'invalid_event_payload'],
      ['ping.free', 'k', { text: 'x'.repeat(300_000) }, 'payload_too_large'],
      ['ping.free', 'k', { text: 'nul \u0000' }, 'unstorable_string'],
      ['ping.free', 'k', undefined, 'unstorable_string'],
    ];
    for (const [name, key, payload, code] of cases) {
      const refused = await cw.sendEvent(name, key as string, payload).catch((error) => error);
      expect(refused, `${name} ${String(key).slice(0, 10)}`).toBeInstanceOf(EngineError);
      expect(refused.code, `${name} ${String(key).slice(0, 10)}`).toBe(code);
    }
    const badKey = await cw
      .sendEvent('ping.free', 'k', {}, { idempotencyKey: '' })
      .catch((error) => error);
    expect(badKey.code).toBe('invalid_idempotency_key');
    expect(await tableCounts(url())).toEqual(before);
    await cw.close();
  });

  it('refuses a bad event step when the module loads', () => {
    const bad = [
      { name: 'Bad Name', key: 'k', timeoutMs: 1 },
      { name: 'ok.name', key: '', timeoutMs: 1 },
      { name: 'ok.name', key: 'k', timeoutMs: 0 },
      { name: 'ok.name', key: 'k', timeoutMs: 1.5 },
      { name: 'ok.name', key: 'k', timeoutMs: 1, payload: z.number(), onTimeout: 'text' },
    ];
    for (const options of bad) {
      expect(() => event(options as Parameters<typeof event>[0])).toThrow(DefinitionError);
    }
  });
});
