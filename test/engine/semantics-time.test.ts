import { defineWorkflow, parseActor, StepError, step } from '@causeway/workflow/internal';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { publishNote } from '../../examples/publish-note/workflow';
import { useTestDatabase } from '../helpers/database';
import { setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import {
  expectLogIsSound,
  gate,
  type LogRow,
  reasons,
  tableCounts,
  taskLog,
} from './semantics-support';

/**
 * Time semantics (R4, R11, R18, R28): delayed work waits for the database clock, never the
 * worker's; backoff is honoured; absolute deadlines finalize work that did not start in time.
 */
const database = useTestDatabase();
const url = () => database().url;

/** Fails with a transient error until `failures` attempts have failed, then succeeds. */
const backoff = defineWorkflow({
  name: 'time-backoff',
  input: z.object({
    label: z.string(),
    failures: z.number().int(),
    retryAfterMs: z.number().int(),
  }),
  steps: {
    only: step<{ label: string; failures: number; retryAfterMs: number }>({
      queue: 'q-backoff',
      maxAttempts: 4,
      backoff: { initialIntervalMs: 300, backoffCoefficient: 2, maximumIntervalMs: 5_000 },
      run: (ctx) => {
        if (ctx.attempt <= ctx.input.failures) {
          throw new StepError(
            'network',
            `attempt ${ctx.attempt} failed`,
            ctx.input.retryAfterMs > 0 ? { retryAfterMs: ctx.input.retryAfterMs } : {},
          );
        }
        return { attempt: ctx.attempt };
      },
    }),
  },
});

/**
 * `delay > 0`: the first attempt fails asking for a retry `delay` ms later (Retry-After);
 * `delay = 0` is a canary that succeeds at once on the same queue.
 */
const delayed = defineWorkflow({
  name: 'time-delayed',
  input: z.object({ label: z.string(), delayMs: z.number().int() }),
  steps: {
    only: step<{ label: string; delayMs: number }>({
      queue: 'q-delayed',
      maxAttempts: 3,
      run: (ctx) => {
        if (ctx.input.delayMs > 0 && ctx.attempt === 1) {
          throw new StepError('throttled', 'come back later', { retryAfterMs: ctx.input.delayMs });
        }
        return { attempt: ctx.attempt };
      },
    }),
  },
});

/** A step that holds its lease until the test opens the gate (for lease renewal checks). */
const longGates = new Map<string, ReturnType<typeof gate>>();
const longSignals = new Map<string, AbortSignal>();
const long = defineWorkflow({
  name: 'time-long',
  input: z.object({ label: z.string() }),
  steps: {
    only: step<{ label: string }>({
      queue: 'q-long',
      reentrant: true,
      maxAttempts: 1,
      run: async (ctx) => {
        longSignals.set(ctx.input.label, ctx.signal);
        await longGates.get(ctx.input.label)?.promise;
        return { aborted: ctx.signal.aborted };
      },
    }),
  },
});

/** Absolute deadlines from acceptance: one for the whole workflow, one on a step. */
const workflowDeadline = defineWorkflow({
  name: 'time-workflow-deadline',
  input: z.object({ label: z.string() }),
  deadlineMs: 60_000,
  steps: {
    first: step({ queue: 'q-deadline', run: () => 'first' }),
    second: step({ queue: 'q-deadline', after: ['first'], run: () => 'second' }),
  },
});
const stepDeadline = defineWorkflow({
  name: 'time-step-deadline',
  input: z.object({ label: z.string() }),
  steps: {
    first: step({ queue: 'q-deadline', deadlineMs: 30_000, run: () => 'first' }),
    second: step({ queue: 'q-deadline', after: ['first'], run: () => 'second' }),
  },
});

/** Two steps on separate queues, so the test decides when each may run (R29). */
const sharedBudget = defineWorkflow({
  name: 'time-shared-budget',
  input: z.object({ label: z.string() }),
  deadlineMs: 60_000,
  steps: {
    first: step({ queue: 'q-budget-1', run: () => 'first' }),
    second: step({ queue: 'q-budget-2', after: ['first'], run: () => 'second' }),
  },
});

/**
 * Fails transiently on every attempt. `mode: 'late-retry'`: attempt 2 asks for a retry after
 * the deadline. `mode: 'clock-jump'`: attempt 2 moves database time past the deadline before
 * failing, i.e. the deadline passes while the attempt runs.
 */
const retriesPastDeadline = defineWorkflow({
  name: 'time-retry-deadline',
  input: z.object({ label: z.string(), mode: z.enum(['late-retry', 'clock-jump']) }),
  deadlineMs: 60_000,
  steps: {
    only: step<{ label: string; mode: 'late-retry' | 'clock-jump' }>({
      queue: 'q-retry-deadline',
      maxAttempts: 100,
      backoff: { initialIntervalMs: 0, maximumIntervalMs: 0 },
      run: async (ctx) => {
        if (ctx.attempt === 1) throw new StepError('network', 'first attempt failed');
        if (ctx.input.mode === 'late-retry') {
          throw new StepError('throttled', 'retry in two minutes', { retryAfterMs: 120_000 });
        }
        await setDatabaseClockOffset(url(), 61_000);
        throw new StepError('unavailable', 'second attempt failed after the deadline');
      },
    }),
  },
});

const workflows = [
  publishNote,
  backoff,
  delayed,
  long,
  workflowDeadline,
  stepDeadline,
  retriesPastDeadline,
  sharedBudget,
];

function engine(options: { leaseMs?: number } = {}) {
  return testEngine(url(), { workflows, ...options });
}

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

afterEach(async () => {
  vi.useRealTimers();
  await setDatabaseClockOffset(url(), 0);
});

afterAll(async () => {
  await setDatabaseClockOffset(url(), 0);
});

/** Each `retry_scheduled` row paired with the `lease_acquired` row that followed it. */
function retryPairs(rows: readonly LogRow[]): { retry: LogRow; claim: LogRow; runAt: Date }[] {
  return rows.flatMap((row, index) => {
    if (row.reason !== 'retry_scheduled') return [];
    const claim = rows.slice(index + 1).find((next) => next.reason === 'lease_acquired');
    if (claim === undefined) throw new Error(`no claim after retry row ${row.id}`);
    return [{ retry: row, claim, runAt: new Date(String(row.detail?.runAt)) }];
  });
}

describe('delayed work waits for the database clock (R4, R11, R18)', () => {
  it('never claims a retry before the run_at its retry_scheduled edge announced', async () => {
    const cw = engine();
    const jittered = await cw.submit('time-backoff', { label: 'j', failures: 3, retryAfterMs: 0 });
    const floored = await cw.submit('time-backoff', {
      label: 'f',
      failures: 3,
      retryAfterMs: 400,
    });
    const worker = await cw.startWorker({ queues: ['q-backoff'], concurrency: 2 });
    const ids = [jittered.workflow.id, floored.workflow.id];
    await waitFor(
      async () => {
        const views = await Promise.all(ids.map((id) => cw.getWorkflow(id)));
        return views.every((view) => view?.state === 'succeeded');
      },
      { timeoutMs: 10_000, description: 'both backoff workflows to succeed' },
    );
    await worker.stop();

    for (const [index, id] of ids.entries()) {
      const view = await cw.getWorkflow(id);
      const task = view?.tasks[0];
      if (task === undefined) throw new Error('no task');
      expect(reasons(task.transitions)).toEqual([
        'submitted',
        'lease_acquired',
        'retry_scheduled',
        'lease_acquired',
        'retry_scheduled',
        'lease_acquired',
        'retry_scheduled',
        'lease_acquired',
        'completed',
      ]);
      expect(task.output).toEqual({ attempt: 4 });
      const pairs = retryPairs(await taskLog(url(), task.id));
      expect(pairs).toHaveLength(3);
      for (const [retryIndex, { retry, claim, runAt }] of pairs.entries()) {
        const delayMs = runAt.getTime() - retry.at.getTime();
        // Full jitter below the exponential ceiling (300, 600, 1200 ms), on top of Retry-After.
        const ceiling = 300 * 2 ** retryIndex;
        if (index === 0) {
          expect(delayMs).toBeGreaterThanOrEqual(0);
          expect(delayMs).toBeLessThan(ceiling);
        } else {
          expect(delayMs).toBeGreaterThanOrEqual(400);
          expect(delayMs).toBeLessThan(400 + ceiling);
        }
        expect(retry.attempt).toBe(retryIndex + 1);
        expect(claim.attempt).toBe(retryIndex + 2);
        // No early claim: the claim's database time is at or after the announced run_at.
        expect(claim.at.getTime()).toBeGreaterThanOrEqual(runAt.getTime());
      }
    }
    await cw.close();
  });

  it('leaves a queued task with a future run_at alone until database time passes it', async () => {
    const cw = engine();
    const later = await cw.submit('time-delayed', { label: 'later', delayMs: 600_000 });
    const worker = await cw.startWorker({ queues: ['q-delayed'], concurrency: 1 });
    const waiting = await waitFor(async () => {
      const task = (await cw.getWorkflow(later.workflow.id))?.tasks[0];
      return task?.state === 'queued' && task.attempt === 1 ? task : undefined;
    });
    const runAt = new Date(String(waiting.transitions.at(-1)?.detail?.runAt));
    expect(waiting.transitions.at(-1)).toMatchObject({ reason: 'retry_scheduled' });
    expect(waiting.runAt?.getTime()).toBe(runAt.getTime());

    // A canary on the same queue proves the idle worker kept claiming meanwhile.
    const canary = await cw.submit('time-delayed', { label: 'canary-1', delayMs: 0 });
    await waitFor(async () => (await cw.getWorkflow(canary.workflow.id))?.state === 'succeeded');
    expect((await cw.getWorkflow(later.workflow.id))?.tasks[0]).toMatchObject({
      state: 'queued',
      attempt: 1,
    });

    // Nine minutes later by the database clock: still not due.
    await setDatabaseClockOffset(url(), 540_000);
    const canary2 = await cw.submit('time-delayed', { label: 'canary-2', delayMs: 0 });
    await waitFor(async () => (await cw.getWorkflow(canary2.workflow.id))?.state === 'succeeded');
    expect((await cw.getWorkflow(later.workflow.id))?.tasks[0]?.state).toBe('queued');

    // Past run_at by the database clock: the idle worker picks it up on its next poll.
    await setDatabaseClockOffset(url(), 601_000);
    const done = await waitFor(async () => {
      const view = await cw.getWorkflow(later.workflow.id);
      return view?.state === 'succeeded' ? view : undefined;
    });
    await worker.stop();
    const claim = done.tasks[0]?.transitions.findLast((row) => row.reason === 'lease_acquired');
    expect(claim?.attempt).toBe(2);
    expect(claim?.at.getTime()).toBeGreaterThanOrEqual(runAt.getTime());
  });
});

describe('a worker whose clock is an hour ahead changes nothing (R11)', () => {
  /** [step, from, to, reason, actor kind, attempt] of every row, workflow rows included. */
  async function shape(cw: ReturnType<typeof engine>, workflowId: string) {
    const view = await cw.getWorkflow(workflowId);
    return (view?.transitions ?? []).map((row) => [
      row.step,
      row.from,
      row.to,
      row.reason,
      parseActor(row.actor).kind,
      row.attempt,
    ]);
  }

  async function publish(cw: ReturnType<typeof engine>, noteId: string) {
    const submitted = await cw.submit('publish-note', { noteId, version: 1 });
    const worker = await cw.startWorker({ queues: ['cpu', 'default', 'network'], concurrency: 2 });
    await waitFor(
      async () => (await cw.getWorkflow(submitted.workflow.id))?.state === 'succeeded',
      { description: `publish-note ${noteId} to succeed` },
    );
    await worker.stop();
    return shape(cw, submitted.workflow.id);
  }

  it('runs publish-note with the same transition sequence, holds leases, honours run_at', async () => {
    const baseline = await publish(engine(), 'clock-baseline');

    const realNow = Date.now();
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    vi.setSystemTime(realNow + 3_600_000);
    try {
      expect(Date.now() - realNow).toBeGreaterThanOrEqual(3_600_000);
      const cw = engine();

      // 1. The same workflow takes exactly the same edges.
      expect(await publish(cw, 'clock-shifted')).toEqual(baseline);

      // 2. A retry due in ten minutes (database time) is not claimed by the shifted worker.
      const later = await cw.submit('time-delayed', { label: 'shift-later', delayMs: 600_000 });
      const worker = await cw.startWorker({ queues: ['q-delayed', 'q-long'], concurrency: 2 });
      await waitFor(async () => {
        const task = (await cw.getWorkflow(later.workflow.id))?.tasks[0];
        return task?.state === 'queued' && task.attempt === 1;
      });
      const canary = await cw.submit('time-delayed', { label: 'shift-canary', delayMs: 0 });
      await waitFor(async () => (await cw.getWorkflow(canary.workflow.id))?.state === 'succeeded');
      const laterTask = (await cw.getWorkflow(later.workflow.id))?.tasks[0];
      expect(laterTask).toMatchObject({ state: 'queued', attempt: 1 });

      // 3. A lease whose expiry is an hour behind the worker's clock is still renewed and held.
      const held = gate();
      longGates.set('shift-long', held);
      const longRun = await cw.submit('time-long', { label: 'shift-long' });
      const leased = await waitFor(async () => {
        const task = (await cw.getWorkflow(longRun.workflow.id))?.tasks[0];
        return task?.state === 'leased' && task.leaseExpiresAt !== null ? task : undefined;
      });
      const firstExpiry = leased.leaseExpiresAt?.getTime() ?? 0;
      // Two renewals (every leaseMs / 3) push the expiry well past the first one.
      await waitFor(
        async () => {
          const task = (await cw.getWorkflow(longRun.workflow.id))?.tasks[0];
          return (task?.leaseExpiresAt?.getTime() ?? 0) > firstExpiry + 1_000;
        },
        { description: 'the lease to be renewed twice' },
      );
      expect(longSignals.get('shift-long')?.aborted).toBe(false);
      held.open();
      const longView = await waitFor(async () => {
        const view = await cw.getWorkflow(longRun.workflow.id);
        return view?.state === 'succeeded' ? view : undefined;
      });
      expect(reasons(longView.tasks[0]?.transitions ?? [])).toEqual([
        'submitted',
        'lease_acquired',
        'completed',
      ]);
      expect(longView.tasks[0]?.output).toEqual({ aborted: false });

      await worker.stop();
      // Tidy: the delayed task is not due for ten minutes; cancel it before start.
      const taskId = laterTask?.id as string;
      expect(await cw.cancelTask(taskId)).toMatchObject({ state: 'cancelled', changed: true });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('absolute deadlines (R28, R29)', () => {
  it.each([
    ['time-workflow-deadline', 'sweep', 61_000],
    ['time-workflow-deadline', 'claim', 61_000],
    ['time-step-deadline', 'sweep', 31_000],
    ['time-step-deadline', 'claim', 31_000],
  ] as const)('%s passed before start is finalized by a %s', async (name, path, jumpMs) => {
    const cw = engine();
    const submitted = await cw.submit(name, { label: `${name}-${path}` });
    const before = (await cw.getWorkflow(submitted.workflow.id))?.tasks[0];
    expect(before?.deadlineAt).not.toBeNull();
    expect(before?.state).toBe('queued');

    // A sweep before the deadline writes nothing for it.
    expect(await cw.sweep()).toBe(0);
    await setDatabaseClockOffset(url(), jumpMs);
    if (path === 'sweep') {
      expect(await cw.sweep()).toBe(1);
    } else {
      const worker = await cw.startWorker({
        queues: ['q-deadline'],
        concurrency: 1,
        sweeper: false,
      });
      await waitFor(async () => (await cw.getWorkflow(submitted.workflow.id))?.state === 'dead', {
        description: 'the claim to finalize the task',
      });
      await worker.stop();
    }
    const view = await cw.getWorkflow(submitted.workflow.id);
    expect(view?.state).toBe('dead');
    const [first, second] = view?.tasks ?? [];
    expect(first).toMatchObject({ state: 'dead', attempt: 0, lastErrorCategory: 'timeout' });
    expect(first?.transitions.map((row) => [row.from, row.to, row.reason, row.actor])).toEqual([
      [null, 'queued', 'submitted', 'client'],
      ['queued', 'dead', 'deadline_exceeded_before_start', 'system'],
    ]);
    // Downstream of a dead step stays pending, so a replay can continue it.
    expect(second?.state).toBe('pending');
    const explanation = await cw.explain(submitted.workflow.id);
    expect(explanation.text).toContain('first: deadline passed before it started: dead');
    expect(explanation.workflowState).toBe('dead');
  });

  it("a downstream step shares the workflow's budget: promotion does not refresh it (R29)", async () => {
    const cw = engine();
    const submitted = await cw.submit('time-shared-budget', { label: 'budget' });
    const firstWorker = await cw.startWorker({ queues: ['q-budget-1'], concurrency: 1 });
    const promoted = await waitFor(async () => {
      const view = await cw.getWorkflow(submitted.workflow.id);
      return view?.tasks[1]?.state === 'queued' ? view : undefined;
    });
    await firstWorker.stop();
    const [first, second] = promoted.tasks;
    expect(first?.state).toBe('succeeded');
    expect(second?.deadlineAt?.getTime()).toBe(first?.deadlineAt?.getTime());
    expect(second?.deadlineAt?.getTime()).toBe(promoted.createdAt.getTime() + 60_000);

    await setDatabaseClockOffset(url(), 61_000);
    const secondWorker = await cw.startWorker({
      queues: ['q-budget-2'],
      concurrency: 1,
      sweeper: false,
    });
    const done = await waitFor(async () => {
      const view = await cw.getWorkflow(submitted.workflow.id);
      return view?.state === 'dead' ? view : undefined;
    });
    await secondWorker.stop();
    expect(done.tasks[1]?.transitions.map((row) => row.reason)).toEqual([
      'submitted',
      'upstream_succeeded',
      'deadline_exceeded_before_start',
    ]);
  });

  it('a deadline that the next retry would miss ends deadline_exceeded', async () => {
    const cw = engine();
    const submitted = await cw.submit('time-retry-deadline', { label: 'late', mode: 'late-retry' });
    const worker = await cw.startWorker({ queues: ['q-retry-deadline'], concurrency: 1 });
    const view = await waitFor(async () => {
      const current = await cw.getWorkflow(submitted.workflow.id);
      return current?.state === 'dead' ? current : undefined;
    });
    await worker.stop();
    const task = view.tasks[0];
    expect(task).toMatchObject({ state: 'dead', attempt: 2, lastErrorCategory: 'throttled' });
    expect(task?.transitions.at(-1)).toMatchObject({
      from: 'leased',
      to: 'dead',
      reason: 'deadline_exceeded',
      errorCategory: 'throttled',
      attempt: 2,
    });
  });

  it('a deadline that passes while a retry runs ends deadline_exceeded', async () => {
    // Long leases, so moving database time past the deadline does not also expire the lease.
    const cw = engine({ leaseMs: 600_000 });
    const submitted = await cw.submit('time-retry-deadline', { label: 'jump', mode: 'clock-jump' });
    const worker = await cw.startWorker({ queues: ['q-retry-deadline'], concurrency: 1 });
    const view = await waitFor(async () => {
      const current = await cw.getWorkflow(submitted.workflow.id);
      return current?.state === 'dead' ? current : undefined;
    });
    await worker.stop();
    const task = view.tasks[0];
    expect(reasons(task?.transitions ?? [])).toEqual([
      'submitted',
      'lease_acquired',
      'retry_scheduled',
      'lease_acquired',
      'deadline_exceeded',
    ]);
    expect(task).toMatchObject({ state: 'dead', attempt: 2, lastErrorCategory: 'unavailable' });
    expect((await cw.explain(submitted.workflow.id)).text).toContain('deadline exceeded');
  });
});

describe('the log of this file', () => {
  it('holds only allowed edges, in unbroken chains, matching every current state (R25)', async () => {
    expect((await tableCounts(url())).workflows).toBeGreaterThan(0);
    await expectLogIsSound(url());
  });
});
