import { defineWorkflow, step } from '@causeway/workflow';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

const database = useTestDatabase();

/** A promise with its resolve function, to let the test drive a step from outside. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Backends of this database waiting on a lock: pid and query text (whitespace collapsed). */
async function lockWaiters(url: string): Promise<{ pid: number; text: string }[]> {
  const rows = await query<{ pid: number; query: string }>(
    url,
    `select pid, query from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`,
  );
  return rows.map((row) => ({ pid: row.pid, text: row.query.replace(/\s+/g, ' ').trim() }));
}

/** A lease renewal may queue on the same row lock at any time; it is not part of the race. */
const isRenewal = (text: string) => text.includes('set lease_expires_at');

describe('a cancel racing the effect boundary of the same step', () => {
  it('never loses the "effect started" marker, so a later lease expiry cannot report cancelled', async () => {
    const url = database().url;
    const goToBoundary = gate();
    const finish = gate();
    let started: string | null = null;
    const effects: string[] = [];
    const workflow = defineWorkflow({
      name: 'boundary-vs-cancel',
      input: z.object({}),
      steps: {
        publish: step({
          reentrant: false,
          maxAttempts: 3,
          run: async (ctx) => {
            started = ctx.taskId;
            await goToBoundary.promise;
            await ctx.boundary();
            // The boundary answered "go on": the effect is submitted now.
            effects.push(ctx.taskId);
            // Then the worker hangs (or dies) before reporting: only the lease can settle it.
            await finish.promise;
            return { published: true };
          },
        }),
      },
    });
    const leaseMs = 1_500;
    const engine = testEngine(url, { workflows: [workflow], leaseMs, sweepIntervalMs: 100 });
    await engine.migrate();
    const { workflow: submitted } = await engine.submit('boundary-vs-cancel', {});
    const worker = await engine.startWorker({ concurrency: 1 });
    const taskId = await waitFor(() => started, { description: 'the step to start' });

    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    let cancel: ReturnType<typeof engine.cancelTask> | undefined;
    try {
      // 1. Another transaction holds the task row, so every write to it queues up.
      await blocker.query('begin');
      await blocker.query('select id from causeway_tasks where id = $1 for update', [taskId]);
      // 2. The step reaches its boundary: the "effect started" write waits first in line.
      goToBoundary.open();
      const boundary = await waitFor(
        async () => (await lockWaiters(url)).find((waiter) => !isRenewal(waiter.text)),
        { description: 'the boundary write waiting on the row lock' },
      );
      // 3. A cancel arrives: it reads the task (no effect yet, as committed) and queues its
      //    write behind the boundary's. (Whatever lock it waits on, it waits: a fixed engine may
      //    lock rows or the workflow differently, and must still come out right.)
      cancel = engine.cancelTask(taskId);
      await waitFor(
        async () =>
          (await lockWaiters(url)).some(
            (waiter) => waiter.pid !== boundary.pid && !isRenewal(waiter.text),
          ),
        { description: 'the cancel waiting behind the boundary' },
      );
    } finally {
      // 4. Release: the boundary commits first (effect started, still leased), then the cancel.
      await blocker.query('commit').catch(() => undefined);
      await blocker.end();
    }
    const answer = await cancel;
    expect(answer).toMatchObject({ taskId, state: 'cancel_requested', changed: true });
    await waitFor(() => effects.length === 1, { description: 'the effect to be submitted' });

    // The boundary said "go on" and the effect went out, so the row must say it started (R10).
    const [row] = await query<{ state: string; effect_started: boolean }>(
      url,
      'select state, effect_started from causeway_tasks where id = $1',
      [taskId],
    );
    expect.soft(row).toEqual({ state: 'cancel_requested', effect_started: true });

    // The worker never reports; the lease runs out. With the effect out, the only honest
    // outcome is dead (effect uncertain), never cancelled (R10, R14, R35).
    const settled = await waitFor(
      async () => {
        const view = await engine.getWorkflow(submitted.id);
        const task = view?.tasks[0];
        return task !== undefined && ['cancelled', 'dead', 'succeeded'].includes(task.state)
          ? task
          : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50, description: 'the task to settle by lease expiry' },
    );
    finish.open();
    await worker.stop({ drainMs: 2_000 });
    expect(settled.transitions.map((edge) => `${edge.from}→${edge.to} (${edge.reason})`)).toEqual([
      'null→queued (submitted)',
      'queued→leased (lease_acquired)',
      'leased→cancel_requested (cancel_requested)',
      'cancel_requested→dead (lease_expired_effect_uncertain)',
    ]);
    expect(await logMismatches(url)).toEqual([]);
  }, 60_000);
});
