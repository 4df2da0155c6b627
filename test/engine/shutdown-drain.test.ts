import { type Engine, LeaseLost } from '@causeway/engine';
import { defineWorkflow, step } from '@causeway/workflow';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { expectLogIsSound, type Gate, gate, reasons } from './semantics-support';

/**
 * Graceful shutdown (R31) and the service's root signal (R6): stop claiming, abort the
 * handlers' signals, wait up to the drain budget, hand back what started no effect
 * (`worker_shutdown`, attempt refunded) and leave the rest to lease expiry (R10).
 */
const database = useTestDatabase();
const url = () => database().url;

type Mode = 'honor' | 'ignore' | 'boundary-honor' | 'boundary-ignore';

interface Run {
  attempt: number;
  abortReason: unknown;
  lateBoundary?: 'crossed' | 'lease_lost' | 'other';
}

const runs = new Map<string, Run[]>();
const gates = new Map<string, Gate>();
/** Labels whose next run completes at once (after a shutdown handed the task back). */
const letFinish = new Set<string>();

function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

const shutdownStep = defineWorkflow({
  name: 'sd-step',
  input: z.object({
    label: z.string(),
    mode: z.enum(['honor', 'ignore', 'boundary-honor', 'boundary-ignore']),
  }),
  steps: {
    only: step<{ label: string; mode: Mode }>({
      queue: 'q-sd',
      reentrant: false,
      maxAttempts: 3,
      run: async (ctx) => {
        const { label, mode } = ctx.input;
        const run: Run = { attempt: ctx.attempt, abortReason: undefined };
        runs.set(label, [...(runs.get(label) ?? []), run]);
        ctx.signal.addEventListener('abort', () => {
          run.abortReason = ctx.signal.reason;
        });
        if (letFinish.has(label)) return { attempt: ctx.attempt };
        if (mode === 'boundary-honor' || mode === 'boundary-ignore') await ctx.boundary();
        if (mode === 'honor' || mode === 'boundary-honor') await untilAborted(ctx.signal);
        await gates.get(label)?.promise;
        if (mode === 'ignore') {
          // Ignored the signal past the drain budget; now it tries to start its effect.
          try {
            await ctx.boundary();
            run.lateBoundary = 'crossed';
          } catch (error) {
            run.lateBoundary = error instanceof LeaseLost ? 'lease_lost' : 'other';
            throw error;
          }
        }
        return { attempt: ctx.attempt };
      },
    }),
  },
});

const workflows = [shutdownStep];

beforeAll(async () => {
  const setup = testEngine(url(), { workflows });
  await setup.migrate();
  await setup.close();
});

afterEach(async () => {
  for (const open of gates.values()) open.open();
  await setDatabaseClockOffset(url(), 0);
});

async function taskRow(workflowId: string) {
  const rows = await query<{
    id: string;
    state: string;
    attempt: number;
    lease_holder: string | null;
    effect_started: boolean;
  }>(
    url(),
    'select id, state, attempt, lease_holder, effect_started from causeway_tasks where workflow_id = $1',
    [workflowId],
  );
  return rows[0] as NonNullable<(typeof rows)[number]>;
}

async function lastEdge(taskId: string) {
  const rows = await query<{
    from_state: string;
    to_state: string;
    reason: string;
    actor: string;
    attempt: number;
  }>(
    url(),
    `select from_state, to_state, reason, actor, attempt from causeway_transitions
      where task_id = $1 order by id desc limit 1`,
    [taskId],
  );
  return rows[0];
}

/** Submits a step in `mode` and waits until a worker is running it. */
async function startRunning(cw: Engine, label: string, mode: Mode) {
  gates.set(label, gate());
  const submitted = await cw.submit('sd-step', { label, mode });
  const worker = await cw.startWorker({ queues: ['q-sd'], concurrency: 2 });
  await waitFor(() => (runs.get(label)?.length ?? 0) > 0, { description: `${label} to start` });
  return { workflowId: submitted.workflow.id, worker };
}

describe('graceful shutdown (R31)', () => {
  it('a step that honours ctx.signal is handed back as worker_shutdown with its attempt refunded', async () => {
    const cw = testEngine(url(), { workflows });
    const { workflowId, worker } = await startRunning(cw, 'honor', 'honor');
    await worker.stop({ drainMs: 10_000 });

    const task = await taskRow(workflowId);
    expect(task).toMatchObject({ state: 'queued', attempt: 0, lease_holder: null });
    expect(await lastEdge(task.id)).toEqual({
      from_state: 'leased',
      to_state: 'queued',
      reason: 'worker_shutdown',
      actor: `worker:${cw.holder}`,
      attempt: 0,
    });
    expect(runs.get('honor')?.[0]?.abortReason).toMatchObject({ reason: 'shutdown' });

    // The next worker runs it as attempt 1 again: the handed-back attempt did not count.
    letFinish.add('honor');
    const next = await cw.startWorker({ queues: ['q-sd'], concurrency: 1 });
    await waitFor(async () => (await taskRow(workflowId)).state === 'succeeded');
    await next.stop();
    expect(runs.get('honor')?.map((run) => run.attempt)).toEqual([1, 1]);
    const view = await cw.getWorkflow(workflowId);
    expect(reasons(view?.tasks[0]?.transitions ?? [])).toEqual([
      'submitted',
      'lease_acquired',
      'worker_shutdown',
      'lease_acquired',
      'completed',
    ]);
  });

  it('a step that ignores the signal past the drain budget, with no effect started, is released too', async () => {
    const cw = testEngine(url(), { workflows });
    const { workflowId, worker } = await startRunning(cw, 'ignore', 'ignore');
    await worker.stop({ drainMs: 200 });

    const task = await taskRow(workflowId);
    expect(task).toMatchObject({
      state: 'queued',
      attempt: 0,
      lease_holder: null,
      effect_started: false,
    });
    expect(await lastEdge(task.id)).toMatchObject({
      reason: 'worker_shutdown',
      to_state: 'queued',
    });

    // The straggler finally tries to start its effect: it no longer holds the lease.
    gates.get('ignore')?.open();
    await waitFor(() => runs.get('ignore')?.[0]?.lateBoundary !== undefined);
    expect(runs.get('ignore')?.[0]?.lateBoundary).toBe('lease_lost');
    expect(await taskRow(workflowId)).toMatchObject({ state: 'queued', effect_started: false });
    expect(await lastEdge(task.id)).toMatchObject({ reason: 'worker_shutdown' });
    expect(await cw.cancelTask(task.id)).toMatchObject({ state: 'cancelled', changed: true });
  });

  it.each([
    ['boundary-honor', 10_000],
    ['boundary-ignore', 200],
  ] as const)(
    'a step that passed ctx.boundary() (%s) is not released: lease expiry decides',
    async (mode, drainMs) => {
      const cw = testEngine(url(), { workflows });
      const { workflowId, worker } = await startRunning(cw, mode, mode);
      await waitFor(async () => (await taskRow(workflowId)).effect_started);
      await worker.stop({ drainMs });

      const task = await taskRow(workflowId);
      expect(task).toMatchObject({
        state: 'leased',
        attempt: 1,
        lease_holder: cw.holder,
        effect_started: true,
      });
      expect(await lastEdge(task.id)).toMatchObject({ reason: 'lease_acquired' });

      // Past the lease by the database clock, the sweeper finalizes it: effect uncertain.
      await setDatabaseClockOffset(url(), 5_000);
      expect(await cw.sweep()).toBe(1);
      expect(await taskRow(workflowId)).toMatchObject({ state: 'dead', lease_holder: null });
      expect(await lastEdge(task.id)).toEqual({
        from_state: 'leased',
        to_state: 'dead',
        reason: 'lease_expired_effect_uncertain',
        actor: `sweeper:${cw.holder}`,
        attempt: 1,
      });
    },
  );
});

describe("the engine's root signal (R6)", () => {
  it('aborting it stops the worker gracefully and closes the engine', async () => {
    const controller = new AbortController();
    const cw = testEngine(url(), { workflows, signal: controller.signal });
    const { workflowId } = await startRunning(cw, 'root', 'honor');
    controller.abort();

    await waitFor(async () => (await taskRow(workflowId)).state === 'queued', {
      description: 'the running step to be handed back',
    });
    const task = await taskRow(workflowId);
    expect(task).toMatchObject({ attempt: 0, lease_holder: null });
    expect(await lastEdge(task.id)).toMatchObject({ reason: 'worker_shutdown' });
    expect(runs.get('root')?.[0]?.abortReason).toMatchObject({ reason: 'shutdown' });
    await expect(cw.submit('sd-step', { label: 'after', mode: 'honor' })).rejects.toMatchObject({
      code: 'closed',
    });
    await expect(cw.startWorker({ concurrency: 1 })).rejects.toMatchObject({ code: 'closed' });

    const other = testEngine(url(), { workflows });
    expect(await other.cancelTask(task.id)).toMatchObject({ state: 'cancelled' });
  });
});

describe("the engine's root signal, already aborted (R6)", () => {
  it('an engine created with an aborted root signal starts no worker and accepts no work', async () => {
    let cw: Engine;
    try {
      cw = testEngine(url(), { workflows, signal: AbortSignal.abort() });
    } catch (error) {
      // Refusing to create the engine at all is a fine answer too.
      expect(error).toMatchObject({ code: expect.stringMatching(/^(closed|aborted)$/) });
      return;
    }
    let refused: unknown;
    try {
      const worker = await cw.startWorker({ queues: ['q-sd'], concurrency: 1 });
      await worker.stop({ drainMs: 0 });
    } catch (error) {
      refused = error;
    }
    expect(refused).toMatchObject({ code: 'closed' });
    await expect(
      cw.submit('sd-step', { label: 'pre-aborted', mode: 'honor' }),
    ).rejects.toMatchObject({
      code: 'closed',
    });
  });
});

describe('the log of this file', () => {
  it('holds only allowed edges, in unbroken chains, matching every current state (R25)', async () => {
    await expectLogIsSound(url());
  });
});
