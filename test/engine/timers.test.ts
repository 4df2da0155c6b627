import { EngineError } from '@causeway/engine';
import { DefinitionError, defineWorkflow, snooze, step } from '@causeway/workflow';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { databaseTime, expectLogIsSound, type LogRow, tableCounts } from './semantics-support';

/**
 * Durable timers (R36): a step's `delayMs`, a submit's `delayMs` or `runAt`, and a step's
 * `snooze`. Time is the database's (R11): the tests move it and check that nothing ran before
 * the run_at its edge announced.
 */
const database = useTestDatabase();
const url = () => database().url;

const delayedStep = defineWorkflow({
  name: 'timer-delayed-step',
  input: z.object({ label: z.string() }),
  steps: {
    review: step({ queue: 'q-timer', run: () => 'reviewed' }),
    publish: step({ queue: 'q-timer', after: ['review'], delayMs: 60_000, run: () => 'published' }),
  },
});

const plain = defineWorkflow({
  name: 'timer-plain',
  input: z.object({ label: z.string() }),
  steps: { only: step({ queue: 'q-timer', run: () => 'done' }) },
});

/** Snoozes on its first run after a checkpoint; its second run reads the checkpoint. */
const polling = defineWorkflow({
  name: 'timer-snooze',
  input: z.object({ label: z.string(), forMs: z.number().int() }),
  deadlineMs: 120_000,
  steps: {
    poll: step<{ label: string; forMs: number }>({
      queue: 'q-timer',
      maxAttempts: 1,
      run: async (ctx) => {
        const submitted = ctx.checkpoints?.submitted;
        if (submitted === undefined) {
          await ctx.checkpoint('submitted', { job: `job-${ctx.input.label}` });
          return snooze({ forMs: ctx.input.forMs, reason: 'platform still rendering' });
        }
        return { job: (submitted as { job: string }).job, attempt: ctx.attempt };
      },
    }),
  },
});

const badSnooze = defineWorkflow({
  name: 'timer-bad-snooze',
  input: z.object({ label: z.string() }),
  steps: {
    poll: step({ queue: 'q-timer', run: () => snooze({ forMs: -5, reason: 'negative' }) }),
  },
});

const workflows = [delayedStep, plain, polling, badSnooze];
const engine = () => testEngine(url(), { workflows });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

afterEach(async () => {
  await setDatabaseClockOffset(url(), 0);
});

async function log(workflowId: string): Promise<LogRow[]> {
  return query<LogRow>(
    url(),
    `select id, task_id, step, from_state, to_state, reason, actor, attempt, at, detail
       from causeway_transitions where workflow_id = $1 and task_id is not null order by id`,
    [workflowId],
  );
}

async function taskRow(workflowId: string, stepName: string) {
  const rows = await query<{
    state: string;
    run_at: Date | null;
    attempt: number;
    lease_holder: string | null;
    checkpoints: Record<string, unknown>;
  }>(
    url(),
    `select state, run_at, attempt, lease_holder, checkpoints from causeway_tasks
      where workflow_id = $1 and step = $2`,
    [workflowId, stepName],
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

describe("a step's delayMs (R36)", () => {
  it('queues the step that long after its upstream step succeeded, and runs it only then', async () => {
    const cw = engine();
    const { workflow } = await cw.submit('timer-delayed-step', { label: 'a' });
    const worker = await cw.startWorker({ concurrency: 2 });
    await waitFor(async () =>
      (await log(workflow.id)).some((row) => row.reason === 'upstream_succeeded'),
    );
    const promoted = (await log(workflow.id)).find((row) => row.reason === 'upstream_succeeded');
    const runAt = new Date((promoted?.at.getTime() ?? 0) + 60_000);
    expect(promoted?.detail).toEqual({ runAt: runAt.toISOString(), delayMs: 60_000 });
    expect((await taskRow(workflow.id, 'publish'))?.run_at?.getTime()).toBe(runAt.getTime());
    expect((await cw.explain(workflow.id)).text).toContain(
      '(delayed 1 min after its upstream steps)',
    );
    // The worker polls meanwhile; it may claim the step only once the database clock is there.
    await setDatabaseClockOffset(url(), 61_000);
    await waitFor(async () => (await workflowState(workflow.id)) === 'succeeded');
    await worker.stop();
    const claim = (await log(workflow.id)).find(
      (row) => row.step === 'publish' && row.reason === 'lease_acquired',
    );
    expect(claim?.at.getTime()).toBeGreaterThanOrEqual(runAt.getTime());
    await expectLogIsSound(url());
  });

  it('is refused at definition time when out of range', () => {
    for (const delayMs of [0, -1, 1.5, 367 * 24 * 3_600_000]) {
      expect(() => step({ delayMs, run: () => null })).toThrow(DefinitionError);
    }
  });
});

describe("a submit's delayMs or runAt (R36, R34)", () => {
  it('delays the first steps by delayMs from acceptance, and says so on the edge', async () => {
    const cw = engine();
    const { workflow } = await cw.submit('timer-plain', { label: 'd' }, { delayMs: 30_000 });
    const [submitted] = await log(workflow.id);
    expect(submitted?.detail).toEqual({ delayMs: 30_000 });
    const row = await taskRow(workflow.id, 'only');
    expect(row?.run_at?.getTime()).toBe((submitted?.at.getTime() ?? 0) + 30_000);
    expect((await cw.explain(workflow.id)).summary).toContain('only queued (due');
    const worker = await cw.startWorker({ concurrency: 1 });
    await setDatabaseClockOffset(url(), 31_000);
    await waitFor(async () => (await workflowState(workflow.id)) === 'succeeded');
    await worker.stop();
    const claim = (await log(workflow.id)).find((entry) => entry.reason === 'lease_acquired');
    expect(claim?.at.getTime()).toBeGreaterThanOrEqual(row?.run_at?.getTime() ?? 0);
  });

  it('runs the first steps at runAt, whatever the acceptance time', async () => {
    const cw = engine();
    const runAt = new Date((await databaseTime(url())).getTime() + 45_000);
    const { workflow } = await cw.submit('timer-plain', { label: 'r' }, { runAt });
    expect((await taskRow(workflow.id, 'only'))?.run_at?.getTime()).toBe(runAt.getTime());
    const [submitted] = await log(workflow.id);
    expect(submitted?.detail).toEqual({ runAt: runAt.toISOString() });
  });

  it('refuses a delay out of range, both forms at once, or a runAt in the past: nothing written', async () => {
    const cw = engine();
    const before = await tableCounts(url());
    const past = new Date(Date.now() - 3_600_000);
    for (const options of [
      { delayMs: -1 },
      { delayMs: 1.5 },
      { delayMs: 400 * 24 * 3_600_000 },
      { runAt: past },
      { runAt: new Date(Number.NaN) },
      { delayMs: 10, runAt: new Date() },
    ]) {
      const refused = await cw.submit('timer-plain', { label: 'x' }, options).catch((e) => e);
      expect(refused).toBeInstanceOf(EngineError);
      expect(refused.code).toBe('invalid_delay');
    }
    expect(await tableCounts(url())).toEqual(before);
  });
});

describe('a snooze (R36)', () => {
  it('releases the lease until then, keeps the checkpoints and does not count the attempt', async () => {
    const cw = engine();
    const { workflow } = await cw.submit('timer-snooze', { label: 's', forMs: 30_000 });
    const worker = await cw.startWorker({ concurrency: 1 });
    await waitFor(async () => (await log(workflow.id)).some((row) => row.reason === 'snoozed'));
    const snoozed = (await log(workflow.id)).find((row) => row.reason === 'snoozed');
    const runAt = new Date((snoozed?.at.getTime() ?? 0) + 30_000);
    expect(snoozed).toMatchObject({ from_state: 'leased', to_state: 'queued', attempt: 0 });
    expect(snoozed?.detail).toEqual({
      runAt: runAt.toISOString(),
      reason: 'platform still rendering',
    });
    const parked = await taskRow(workflow.id, 'poll');
    expect(parked).toMatchObject({ state: 'queued', attempt: 0, lease_holder: null });
    expect(parked?.checkpoints).toEqual({ submitted: { job: 'job-s' } });
    expect((await cw.explain(workflow.id)).text).toContain(
      `snoozed until ${runAt.toISOString().slice(11, 19)}: platform still rendering`,
    );
    await setDatabaseClockOffset(url(), 31_000);
    await waitFor(async () => (await workflowState(workflow.id)) === 'succeeded');
    await worker.stop();
    const rows = await log(workflow.id);
    expect(rows.map((row) => [row.reason, row.attempt])).toEqual([
      ['submitted', 0],
      ['lease_acquired', 1],
      ['snoozed', 0],
      ['lease_acquired', 1],
      ['completed', 1],
    ]);
    const claimAgain = rows.filter((row) => row.reason === 'lease_acquired')[1];
    expect(claimAgain?.at.getTime()).toBeGreaterThanOrEqual(runAt.getTime());
    const output = await query<{ output: unknown }>(
      url(),
      `select output from causeway_tasks where workflow_id = $1`,
      [workflow.id],
    );
    expect(output[0]?.output).toEqual({ job: 'job-s', attempt: 1 });
    await expectLogIsSound(url());
  });

  it('past the deadline ends the task dead (deadline_exceeded) instead', async () => {
    const cw = engine();
    const { workflow } = await cw.submit('timer-snooze', { label: 'late', forMs: 300_000 });
    const worker = await cw.startWorker({ concurrency: 1 });
    await waitFor(async () => (await workflowState(workflow.id)) === 'dead');
    await worker.stop();
    const last = (await log(workflow.id)).at(-1);
    expect(last).toMatchObject({
      from_state: 'leased',
      to_state: 'dead',
      reason: 'deadline_exceeded',
    });
  });

  it('with bad arguments fails the attempt for good (invalid_argument)', async () => {
    const cw = engine();
    const { workflow } = await cw.submit('timer-bad-snooze', { label: 'b' });
    const worker = await cw.startWorker({ concurrency: 1 });
    await waitFor(async () => (await workflowState(workflow.id)) === 'dead');
    await worker.stop();
    const rows = await query<{ reason: string; error_category: string; error_summary: string }>(
      url(),
      `select reason, error_category, error_summary from causeway_transitions
        where workflow_id = $1 and task_id is not null order by id desc limit 1`,
      [workflow.id],
    );
    expect(rows[0]).toMatchObject({
      reason: 'non_retryable_error',
      error_category: 'invalid_argument',
    });
    expect(rows[0]?.error_summary).toContain('snooze: forMs must be an integer');
  });
});
