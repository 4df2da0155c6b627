import { EngineError } from '@causeway/engine';
import { defineWorkflow, snooze, step } from '@causeway/workflow';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { databaseTime, tableCounts } from './semantics-support';

/**
 * R11 for the times a caller gives: a submit's `runAt` and a snooze's `untilMs` are judged by
 * the database's clock, not by the clock of the process that gave them. Each test moves the
 * database clock an hour away from this process's, so that the two clocks disagree on the
 * decision, and checks that the database's wins.
 */
const database = useTestDatabase();
const url = () => database().url;
const hourMs = 3_600_000;

const plain = defineWorkflow({
  name: 'clock-plain',
  input: z.object({ label: z.string() }),
  steps: { only: step({ queue: 'q-clock', run: () => 'done' }) },
});

/** Snoozes once until this process's now plus `fromNowMs`, then succeeds. */
const snoozing = defineWorkflow({
  name: 'clock-snooze',
  input: z.object({ label: z.string(), fromNowMs: z.number().int() }),
  steps: {
    poll: step<{ label: string; fromNowMs: number }>({
      queue: 'q-clock',
      maxAttempts: 1,
      run: async (ctx) => {
        if (ctx.checkpoints?.asked !== undefined) return 'done';
        const untilMs = Date.now() + ctx.input.fromNowMs;
        await ctx.checkpoint('asked', { untilMs });
        return snooze({ untilMs, reason: 'until the time asked for' });
      },
    }),
  },
});

const engine = () => testEngine(url(), { workflows: [plain, snoozing] });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

afterEach(async () => {
  await setDatabaseClockOffset(url(), 0);
});

async function taskRow(workflowId: string) {
  const rows = await query<{
    state: string;
    run_at: Date | null;
    checkpoints: { asked?: { untilMs: number } };
  }>(url(), 'select state, run_at, checkpoints from causeway_tasks where workflow_id = $1', [
    workflowId,
  ]);
  return rows[0];
}

async function lastEdge(workflowId: string) {
  const rows = await query<{
    to_state: string;
    reason: string;
    error_category: string | null;
    error_summary: string | null;
  }>(
    url(),
    `select to_state, reason, error_category, error_summary from causeway_transitions
      where workflow_id = $1 and task_id is not null order by id desc limit 1`,
    [workflowId],
  );
  return rows[0];
}

describe("a submit's runAt is judged by the database's clock (R11, R36)", () => {
  it('refuses a runAt that is now for the caller but an hour past for the database: nothing written', async () => {
    await setDatabaseClockOffset(url(), hourMs);
    const cw = engine();
    const before = await tableCounts(url());
    const runAt = new Date();
    const refused = await cw.submit('clock-plain', { label: 'now' }, { runAt }).catch((e) => e);
    expect(refused).toBeInstanceOf(EngineError);
    expect(refused.code).toBe('invalid_delay');
    expect(refused.message).toContain(`runAt ${runAt.toISOString()} is in the past`);
    expect(refused.message).toContain('database time');
    expect(refused.details).toMatchObject({ runAt: runAt.toISOString() });
    expect(await tableCounts(url())).toEqual(before);
  });

  it('accepts a runAt half an hour past for the caller when the database is an hour behind', async () => {
    await setDatabaseClockOffset(url(), -hourMs);
    const cw = engine();
    const runAt = new Date(Date.now() - hourMs / 2);
    const { workflow } = await cw.submit('clock-plain', { label: 'behind' }, { runAt });
    expect((await taskRow(workflow.id))?.run_at?.getTime()).toBe(runAt.getTime());
    expect(runAt.getTime()).toBeGreaterThan((await databaseTime(url())).getTime());
  });

  it('accepts a runAt beyond the limit ahead for the caller but within it for the database', async () => {
    await setDatabaseClockOffset(url(), 2 * 24 * hourMs);
    const cw = engine();
    const runAt = new Date(Date.now() + 367 * 24 * hourMs);
    const { workflow } = await cw.submit('clock-plain', { label: 'ahead' }, { runAt });
    expect((await taskRow(workflow.id))?.run_at?.getTime()).toBe(runAt.getTime());
  });

  it("refuses inside the caller's transaction without writing, and the transaction goes on", async () => {
    await setDatabaseClockOffset(url(), hourMs);
    const cw = engine();
    const before = await tableCounts(url());
    const runAt = new Date();
    const pool = new pg.Pool({ connectionString: url(), max: 1 });
    // biome-ignore lint/suspicious/noExplicitAny: the caller's own schema, untyped here.
    const callerDb = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
    try {
      const accepted = await callerDb.transaction().execute(async (transaction) => {
        const refused = await cw
          .submit('clock-plain', { label: 'tx-refused' }, { runAt, transaction })
          .catch((e) => e);
        expect(refused).toBeInstanceOf(EngineError);
        expect(refused.code).toBe('invalid_delay');
        return cw.submit('clock-plain', { label: 'tx-accepted' }, { transaction });
      });
      const after = await tableCounts(url());
      expect(after).toEqual({
        workflows: before.workflows + 1,
        tasks: before.tasks + 1,
        transitions: after.transitions,
      });
      expect((await taskRow(accepted.workflow.id))?.state).toBe('queued');
    } finally {
      await callerDb.destroy();
    }
  });
});

describe("a snooze's untilMs is judged by the database's clock (R11, R36)", () => {
  it('fails the attempt for good when untilMs is a minute ahead for the worker but an hour past for the database', async () => {
    await setDatabaseClockOffset(url(), hourMs);
    const cw = engine();
    const { workflow } = await cw.submit('clock-snooze', { label: 'past', fromNowMs: 60_000 });
    const worker = await cw.startWorker({ concurrency: 1 });
    await waitFor(async () => (await taskRow(workflow.id))?.state === 'dead');
    await worker.stop();
    const edge = await lastEdge(workflow.id);
    expect(edge).toMatchObject({
      to_state: 'dead',
      reason: 'non_retryable_error',
      error_category: 'invalid_argument',
    });
    expect(edge?.error_summary).toContain('snooze: untilMs');
    expect(edge?.error_summary).toContain('is in the past');
  });

  it('snoozes until untilMs when it is half an hour past for the worker but ahead for the database', async () => {
    await setDatabaseClockOffset(url(), -hourMs);
    const cw = engine();
    const { workflow } = await cw.submit('clock-snooze', {
      label: 'ahead',
      fromNowMs: -hourMs / 2,
    });
    const worker = await cw.startWorker({ concurrency: 1 });
    await waitFor(async () => (await lastEdge(workflow.id))?.reason === 'snoozed');
    await worker.stop();
    const task = await taskRow(workflow.id);
    expect(task?.state).toBe('queued');
    expect(task?.run_at?.getTime()).toBe(task?.checkpoints.asked?.untilMs);
  });
});
