import { defineWorkflow, StepError, step } from '@causeway/workflow/internal';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { taskLog } from './semantics-support';

/**
 * R51 on a real database: a step that throws `StepError('throttled', …, { retryAfterMs })` is
 * retried exactly `retryAfterMs` after its failure on the database clock, instead of the
 * backoff; the retry edge and `explain` say why it waits.
 */
const database = useTestDatabase();
/** HH:MM:SS in UTC, as explanations write times. */
const clock = (at: Date) => at.toISOString().slice(11, 19);
const url = () => database().url;

/**
 * `retryAfterMs > 0`: the first attempt is throttled with that wait; `retryAfterMs = 0` is a
 * canary that succeeds at once on the same queue. `bad` throws a StepError with a wait out of
 * range, which the constructor refuses.
 */
const throttled = defineWorkflow({
  name: 'throttled-retry',
  input: z.object({ label: z.string(), retryAfterMs: z.number().int(), bad: z.boolean() }),
  steps: {
    only: step<{ label: string; retryAfterMs: number; bad: boolean }>({
      queue: 'q-throttled',
      maxAttempts: 3,
      // A backoff of up to an hour: were it added, the retry would be due far later.
      backoff: {
        initialIntervalMs: 3_600_000,
        backoffCoefficient: 2,
        maximumIntervalMs: 3_600_000,
      },
      run: (ctx) => {
        if (ctx.attempt === 1 && ctx.input.bad) {
          throw new StepError('throttled', 'too busy', { retryAfterMs: 0 });
        }
        if (ctx.attempt === 1 && ctx.input.retryAfterMs > 0) {
          throw new StepError('throttled', 'platform /posts: 429', {
            retryAfterMs: ctx.input.retryAfterMs,
          });
        }
        return { attempt: ctx.attempt };
      },
    }),
  },
});

function engine() {
  return testEngine(url(), { workflows: [throttled] });
}

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

afterEach(async () => {
  await setDatabaseClockOffset(url(), 0);
});

afterAll(async () => {
  await setDatabaseClockOffset(url(), 0);
});

describe('a throttled step (R51)', () => {
  it('is retried exactly retryAfterMs after it failed, on the database clock, not a backoff later', async () => {
    const cw = engine();
    const retryAfterMs = 600_000;
    const later = await cw.submit('throttled-retry', { label: 'later', retryAfterMs, bad: false });
    const worker = await cw.startWorker({ queues: ['q-throttled'], concurrency: 1 });
    const waiting = await waitFor(async () => {
      const task = (await cw.getWorkflow(later.workflow.id))?.tasks[0];
      return task?.state === 'queued' && task.attempt === 1 ? task : undefined;
    });
    const retry = waiting.transitions.at(-1);
    expect(retry).toMatchObject({
      reason: 'retry_scheduled',
      errorCategory: 'throttled',
      errorSummary: 'platform /posts: 429',
    });
    const runAt = new Date(String(retry?.detail?.runAt));
    // Exactly the asked wait after the failure's database time: the hour of backoff is not added.
    expect(runAt.getTime() - (retry?.at.getTime() ?? 0)).toBe(retryAfterMs);
    expect(waiting.runAt?.getTime()).toBe(runAt.getTime());
    expect(retry?.detail?.retryAfterMs).toBe(retryAfterMs);

    // The log row explains the wait.
    const explanation = await cw.explain(later.workflow.id);
    expect(explanation.text).toContain(
      `only: failed (throttled: platform /posts: 429), retry at ${clock(runAt)}: throttled, the step asked to wait 600 s`,
    );

    // Half a minute before run_at by the database clock: a canary runs, the task does not.
    await setDatabaseClockOffset(url(), retryAfterMs - 30_000);
    const canary = await cw.submit('throttled-retry', {
      label: 'canary',
      retryAfterMs: 0,
      bad: false,
    });
    await waitFor(async () => (await cw.getWorkflow(canary.workflow.id))?.state === 'succeeded');
    expect((await cw.getWorkflow(later.workflow.id))?.tasks[0]).toMatchObject({
      state: 'queued',
      attempt: 1,
    });

    // Past run_at by the database clock: the idle worker takes it on its next poll.
    await setDatabaseClockOffset(url(), retryAfterMs + 1_000);
    const done = await waitFor(async () => {
      const view = await cw.getWorkflow(later.workflow.id);
      return view?.state === 'succeeded' ? view : undefined;
    });
    await worker.stop();
    const log = await taskLog(url(), done.tasks[0]?.id as string);
    const claim = log.findLast((row) => row.reason === 'lease_acquired');
    if (claim === undefined) throw new Error('no claim after the retry');
    expect(claim.attempt).toBe(2);
    // R4: claimed at or after run_at, database time.
    expect(claim.at.getTime()).toBeGreaterThanOrEqual(runAt.getTime());
    expect(done.tasks[0]?.output).toEqual({ attempt: 2 });
  });

  it('a StepError asking for a wait out of range is refused with invalid_retry_after, and the attempt fails as unknown', async () => {
    const cw = engine();
    const bad = await cw.submit('throttled-retry', { label: 'bad', retryAfterMs: 0, bad: true });
    const worker = await cw.startWorker({ queues: ['q-throttled'], concurrency: 1 });
    const retried = await waitFor(async () => {
      const task = (await cw.getWorkflow(bad.workflow.id))?.tasks[0];
      const row = task?.transitions.find((edge) => edge.reason === 'retry_scheduled');
      return row;
    });
    await worker.stop();
    expect(retried.errorCategory).toBe('unknown');
    expect(retried.errorSummary).toMatch(
      /^invalid_retry_after: StepError retryAfterMs must be an integer number of milliseconds from 1 to 86400000, got 0$/,
    );
    expect(retried.detail?.retryAfterMs).toBeUndefined();
  });
});
