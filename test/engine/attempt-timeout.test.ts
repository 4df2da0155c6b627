import { setTimeout as sleep } from 'node:timers/promises';
import { StepAbort } from '@causeway/engine';
import { defineWorkflow, step } from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { testEngine } from '../helpers/engine';
import { edges } from '../helpers/task-edges';
import { waitFor } from '../helpers/wait-for';
import { expectLogIsSound, type Gate, gate } from './semantics-support';

/**
 * The per-attempt timeout (R28) is enforced by the worker: the step's signal aborts when
 * `timeoutMs` has passed since the attempt started, and the attempt ends as a `timeout`
 * failure (retried, then dead), long before its lease could expire. The clock starts when
 * the worker starts the attempt, not when it claimed the task: time spent waiting in the
 * worker's prefetch queue is not charged.
 */
const database = useTestDatabase();
const url = () => database().url;

/** Far longer than any test here: only the attempt timeout can end these attempts. */
const leaseMs = 60_000;
const hangTimeoutMs = 200;

interface Seen {
  readonly attempt: number;
  readonly signal: AbortSignal;
}
const seen = new Map<string, Seen[]>();

/**
 * Never resolves on its own: `listener` waits for its signal, `sleep` awaits a minute-long
 * timer that listens to the signal (the two ways a step honours it).
 */
const hang = defineWorkflow({
  name: 'timeout-hang',
  input: z.object({ label: z.string(), mode: z.enum(['listener', 'sleep']) }),
  steps: {
    only: step<{ label: string; mode: 'listener' | 'sleep' }>({
      queue: 'q-hang',
      reentrant: true,
      maxAttempts: 2,
      timeoutMs: hangTimeoutMs,
      backoff: { initialIntervalMs: 0, maximumIntervalMs: 0 },
      run: async (ctx) => {
        const label = ctx.input.label;
        seen.set(label, [...(seen.get(label) ?? []), { attempt: ctx.attempt, signal: ctx.signal }]);
        if (ctx.input.mode === 'sleep') {
          await sleep(60_000, undefined, { signal: ctx.signal });
        } else {
          await new Promise((_resolve, reject) => {
            ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
          });
        }
        return { finished: true };
      },
    }),
  },
});

/** The blocker holds the queue's one slot until the test opens its gate. */
const gates = new Map<string, Gate>();
const started = new Map<string, number>();
const blocker = defineWorkflow({
  name: 'timeout-blocker',
  input: z.object({ label: z.string() }),
  steps: {
    only: step<{ label: string }>({
      queue: 'q-prefetch',
      reentrant: true,
      maxAttempts: 1,
      run: async (ctx) => {
        await gates.get(ctx.input.label)?.promise;
        return { released: true };
      },
    }),
  },
});

/** A short step with a short timeout on the same queue: it runs well within its timeout. */
const measuredTimeoutMs = 1_000;
const measured = defineWorkflow({
  name: 'timeout-measured',
  input: z.object({ label: z.string() }),
  steps: {
    only: step<{ label: string }>({
      queue: 'q-prefetch',
      reentrant: true,
      maxAttempts: 1,
      timeoutMs: measuredTimeoutMs,
      run: async (ctx) => {
        started.set(ctx.input.label, performance.now());
        await sleep(50, undefined, { signal: ctx.signal });
        return { ranFor: 50 };
      },
    }),
  },
});

const workflows = [hang, blocker, measured];
const engine = () => testEngine(url(), { workflows, leaseMs });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

describe('the attempt timeout aborts the step and fails the attempt (R28)', () => {
  it.each(['listener', 'sleep'] as const)(
    'a step waiting on its signal (%s) times out twice and ends dead, not by its lease',
    async (mode) => {
      const cw = engine();
      const label = `hang-${mode}`;
      const submittedAt = performance.now();
      const submitted = await cw.submit('timeout-hang', { label, mode });
      const worker = await cw.startWorker({ queues: ['q-hang'], concurrency: 1 });
      const view = await waitFor(
        async () => {
          const current = await cw.getWorkflow(submitted.workflow.id);
          return current?.state === 'dead' ? current : undefined;
        },
        { description: 'both attempts to time out' },
      );
      const elapsedMs = performance.now() - submittedAt;
      await worker.stop();

      const task = view.tasks[0];
      if (task === undefined) throw new Error('the workflow has no task');
      expect(task).toMatchObject({ state: 'dead', attempt: 2, lastErrorCategory: 'timeout' });
      const actor = `worker:${cw.holder}`;
      expect(edges(task)).toEqual([
        { from: null, to: 'queued', reason: 'submitted', actor: 'client', attempt: 0 },
        { from: 'queued', to: 'leased', reason: 'lease_acquired', actor, attempt: 1 },
        { from: 'leased', to: 'queued', reason: 'retry_scheduled', actor, attempt: 1 },
        { from: 'queued', to: 'leased', reason: 'lease_acquired', actor, attempt: 2 },
        { from: 'leased', to: 'dead', reason: 'attempts_exhausted', actor, attempt: 2 },
      ]);
      const [, firstLease, retry, secondLease, dead] = task.transitions;
      for (const failed of [retry, dead]) {
        expect(failed?.errorCategory).toBe('timeout');
        expect(failed?.errorSummary).toContain(`the attempt timeout (${hangTimeoutMs} ms) passed`);
      }
      // Each attempt ran about its timeout: not cut short, and nowhere near the lease.
      for (const [lease, failed] of [
        [firstLease, retry],
        [secondLease, dead],
      ] as const) {
        const ranMs = (failed?.at.getTime() ?? 0) - (lease?.at.getTime() ?? 0);
        expect(ranMs).toBeGreaterThanOrEqual(hangTimeoutMs - 20);
        expect(ranMs).toBeLessThan(leaseMs / 10);
      }
      expect(elapsedMs).toBeLessThan(leaseMs / 5);

      // The handler's signal was aborted, each time, because of the attempt timeout.
      const attempts = seen.get(label) ?? [];
      expect(attempts.map((entry) => entry.attempt)).toEqual([1, 2]);
      for (const entry of attempts) {
        expect(entry.signal.aborted).toBe(true);
        expect(entry.signal.reason).toBeInstanceOf(StepAbort);
        expect((entry.signal.reason as StepAbort).reason).toBe('attempt_timeout');
      }
    },
  );
});

describe('the attempt timeout counts from the worker start, not the claim (R28)', () => {
  it('a task that waited in the prefetch queue longer than its timeout still gets all of it', async () => {
    const cw = engine();
    const open = gate();
    gates.set('hold', open);
    const held = await cw.submit('timeout-blocker', { label: 'hold' });
    const worker = await cw.startWorker({ queues: ['q-prefetch'], concurrency: 1, prefetch: 1 });
    await waitFor(
      async () => (await cw.getWorkflow(held.workflow.id))?.tasks[0]?.state === 'leased',
      { description: 'the blocker to take the one slot' },
    );

    // Claimed into the prefetch queue behind the blocker: leased, but not started.
    const waiting = await cw.submit('timeout-measured', { label: 'waited' });
    await waitFor(
      async () => (await cw.getWorkflow(waiting.workflow.id))?.tasks[0]?.state === 'leased',
      { description: 'the measured task to be prefetched' },
    );
    const claimedAt = performance.now();
    expect(worker.running.size).toBe(1);
    // Time passes in the queue: longer than the measured step's whole timeout.
    await sleep(measuredTimeoutMs * 1.5);
    expect(started.has('waited')).toBe(false);
    open.open();

    const view = await waitFor(
      async () => {
        const current = await cw.getWorkflow(waiting.workflow.id);
        return current?.state === 'succeeded' || current?.state === 'dead' ? current : undefined;
      },
      { description: 'the measured task to settle' },
    );
    await worker.stop();
    const startedAt = started.get('waited') ?? Number.NaN;
    expect(startedAt - claimedAt).toBeGreaterThanOrEqual(measuredTimeoutMs * 1.5);
    const task = view.tasks[0];
    expect(task).toMatchObject({ state: 'succeeded', attempt: 1, lastErrorCategory: null });
    expect(task?.output).toEqual({ ranFor: 50 });
    expect(task?.transitions.map((row) => row.reason)).toEqual([
      'submitted',
      'lease_acquired',
      'completed',
    ]);
  });
});

describe('the log of this file', () => {
  it('holds only allowed edges, in unbroken chains, matching every current state (R25)', async () => {
    await expectLogIsSound(url());
  });
});
