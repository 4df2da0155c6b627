import type { Engine, TaskView } from '@causeway/engine';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, testEngine } from '../helpers/engine';
import { edges, reRunAfterLeaseExpiry } from '../helpers/task-edges';
import { waitFor } from '../helpers/wait-for';
import { type Child, isMessage, spawnFixture } from './fixtures/children';
import { crashWorkflows } from './fixtures/crash-workflows';

const database = useTestDatabase();

/** Short leases so a killed worker's lease runs out quickly (renewed every third of it). */
const leaseMs = 800;

interface ParentRun {
  readonly taskId: string;
  readonly where: string;
  readonly attempt: number;
  /** The task row's state and holder while the re-run was in its step. */
  readonly stateDuringRun: string | undefined;
  readonly holderDuringRun: string | null | undefined;
}

/**
 * The parent's engine: same workflow names and code as the child, but its hook records the
 * (re-)run and lets the step finish.
 */
function parentEngine(url: string): { engine: Engine; runs: ParentRun[] } {
  const runs: ParentRun[] = [];
  let engine: Engine | undefined;
  engine = testEngine(url, {
    leaseMs,
    sweepIntervalMs: 100,
    pollIntervalMs: 100,
    workflows: crashWorkflows({
      async reached(ctx, where) {
        const row = await (engine as Engine).db
          .selectFrom('causeway_tasks')
          .select(['state', 'lease_holder'])
          .where('id', '=', ctx.taskId)
          .executeTakeFirst();
        runs.push({
          taskId: ctx.taskId,
          where,
          attempt: ctx.attempt,
          stateDuringRun: row?.state,
          holderDuringRun: row?.lease_holder,
        });
      },
    }),
  });
  return { engine, runs };
}

/**
 * Submits one workflow per name, lets a child process claim them all and hang at the point of
 * interest, checks that the leases are the child's, then SIGKILLs it.
 */
async function killWhileRunning(
  url: string,
  engine: Engine,
  names: readonly string[],
): Promise<{ child: Child; childHolder: string; taskIds: Map<string, string> }> {
  const child = spawnFixture('crash-worker.ts', {
    CAUSEWAY_CHILD_DATABASE_URL: url,
    CAUSEWAY_CHILD_LEASE_MS: String(leaseMs),
    CAUSEWAY_CHILD_CONCURRENCY: '4',
  });
  const { holder: childHolder } = await child.ready(60_000);
  expect(childHolder).not.toBe(engine.holder);
  expect(childHolder).toContain(`/${child.process.pid}/`);

  const taskIds = new Map<string, string>();
  for (const name of names) {
    const { workflow } = await engine.submit(name, { label: name });
    const reached = await child.waitForMessage(
      isMessage('reached', (message) => message.workflowId === workflow.id),
      { description: `${name} reaching its point of interest` },
    );
    taskIds.set(name, reached.taskId);
  }

  // The child holds every lease under its own holder id, and keeps renewing it while hung.
  for (const [name, taskId] of taskIds) {
    const task = await engine.db
      .selectFrom('causeway_tasks')
      .select(['state', 'lease_holder', 'lease_epoch', 'attempt'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    expect(task, name).toMatchObject({ state: 'leased', lease_holder: childHolder, attempt: 1 });
  }

  const exit = await child.kill();
  expect(exit.signal).toBe('SIGKILL');
  return { child, childHolder, taskIds };
}

async function taskView(engine: Engine, taskId: string): Promise<TaskView | undefined> {
  const row = await engine.db
    .selectFrom('causeway_tasks')
    .select('workflow_id')
    .where('id', '=', taskId)
    .executeTakeFirstOrThrow();
  const workflow = await engine.getWorkflow(row.workflow_id);
  return workflow?.tasks.find((task) => task.id === taskId);
}

async function waitForTaskState(engine: Engine, taskId: string, state: string, child: Child) {
  try {
    return await waitFor(
      async () => {
        const task = await taskView(engine, taskId);
        return task?.state === state ? task : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50, description: `task ${taskId} ${state}` },
    );
  } catch (error) {
    const task = await taskView(engine, taskId);
    throw new Error(
      `${String(error)}\ntask: ${JSON.stringify(task, null, 2)}\n--- child output ---\n${child.output()}`,
    );
  }
}

describe('SIGKILL of a worker process in the middle of a step', () => {
  it('(a) re-runs a reentrant step after its lease expires, under the new holder', async () => {
    const url = database().url;
    const { engine, runs } = parentEngine(url);
    await engine.migrate();
    const { child, childHolder, taskIds } = await killWhileRunning(url, engine, [
      'crash-reentrant',
    ]);
    const taskId = taskIds.get('crash-reentrant') as string;

    const worker = await engine.startWorker({ concurrency: 2 }); // with the sweeper
    const task = await waitForTaskState(engine, taskId, 'succeeded', child);
    await worker.stop();

    expect(edges(task)).toEqual(reRunAfterLeaseExpiry(childHolder, engine.holder));
    // The re-run happened exactly once, in the parent, under the parent's own lease.
    expect(runs).toEqual([
      {
        taskId,
        where: 'mid-step',
        attempt: 2,
        stateDuringRun: 'leased',
        holderDuringRun: engine.holder,
      },
    ]);
    expect(task).toMatchObject({ attempt: 2, leaseHolder: null, leaseEpoch: 2 });
    expect(task.output).toEqual({ label: 'crash-reentrant', attempt: 2 });
    expect(await logMismatches(url)).toEqual([]);
  }, 90_000);

  it('(b) ends a non-reentrant step killed after its boundary or checkpoint in dead, never re-run', async () => {
    const url = database().url;
    const { engine, runs } = parentEngine(url);
    await engine.migrate();
    const names = ['crash-after-boundary', 'crash-after-checkpoint'];
    const { child, childHolder, taskIds } = await killWhileRunning(url, engine, names);

    const worker = await engine.startWorker({ concurrency: 2 });
    const dead = new Map<string, TaskView>();
    for (const name of names) {
      dead.set(name, await waitForTaskState(engine, taskIds.get(name) as string, 'dead', child));
    }
    // Stopping waits for anything still running: a re-run would have shown up in `runs`.
    await worker.stop();

    for (const name of names) {
      const task = dead.get(name) as TaskView;
      expect(edges(task), name).toEqual([
        { from: null, to: 'queued', reason: 'submitted', actor: 'client', attempt: 0 },
        {
          from: 'queued',
          to: 'leased',
          reason: 'lease_acquired',
          actor: `worker:${childHolder}`,
          attempt: 1,
        },
        {
          from: 'leased',
          to: 'dead',
          reason: 'lease_expired_effect_uncertain',
          actor: `sweeper:${engine.holder}`,
          attempt: 1,
        },
      ]);
      expect(task.transitions.at(-1)?.errorCategory, name).toBe('unknown');
      expect(task, name).toMatchObject({ effectStarted: true, attempt: 1, leaseHolder: null });
      const workflow = await engine.getWorkflow(task.workflowId);
      expect(workflow?.state, name).toBe('dead');
    }
    expect(dead.get('crash-after-checkpoint')?.checkpoints).toEqual({
      submitted: { externalId: 'ext-crash-after-checkpoint' },
    });
    // Never re-run: the parent's hook did not see either task.
    expect(runs).toEqual([]);
    // A further sweep finds nothing to do; dead stays dead.
    expect(await engine.sweep()).toBe(0);
    for (const name of names) {
      expect((await taskView(engine, taskIds.get(name) as string))?.state).toBe('dead');
    }
    expect(await logMismatches(url)).toEqual([]);
  }, 90_000);

  it('(c) re-queues a non-reentrant step killed before any boundary and succeeds on the re-run', async () => {
    const url = database().url;
    const { engine, runs } = parentEngine(url);
    await engine.migrate();
    const { child, childHolder, taskIds } = await killWhileRunning(url, engine, [
      'crash-before-boundary',
    ]);
    const taskId = taskIds.get('crash-before-boundary') as string;

    // Nothing started: the row says so while the lease is still running out.
    const beforeExpiry = await taskView(engine, taskId);
    expect(beforeExpiry?.effectStarted).toBe(false);

    const worker = await engine.startWorker({ concurrency: 2 });
    const task = await waitForTaskState(engine, taskId, 'succeeded', child);
    await worker.stop();

    expect(edges(task)).toEqual(reRunAfterLeaseExpiry(childHolder, engine.holder));
    expect(runs).toEqual([
      {
        taskId,
        where: 'before-boundary',
        attempt: 2,
        stateDuringRun: 'leased',
        holderDuringRun: engine.holder,
      },
    ]);
    // The re-run passed its boundary (effect started) and finished under the new lease.
    expect(task).toMatchObject({ attempt: 2, effectStarted: true, leaseHolder: null });
    expect(task.output).toEqual({ label: 'crash-before-boundary', attempt: 2 });
    expect(await logMismatches(url)).toEqual([]);
  }, 90_000);
  it("(d) settles a cancel of a killed worker's task by lease expiry: cancelled if nothing started, else dead (R16)", async () => {
    const url = database().url;
    const { engine, runs } = parentEngine(url);
    await engine.migrate();
    const names = ['crash-before-boundary', 'crash-after-boundary'];
    const { child, childHolder, taskIds } = await killWhileRunning(url, engine, names);

    // The worker is gone, so nobody will confirm at a boundary: there is no "force cancel".
    for (const name of names) {
      const answer = await engine.cancelTask(taskIds.get(name) as string);
      expect(answer, name).toMatchObject({ state: 'cancel_requested', changed: true });
    }
    const worker = await engine.startWorker({ concurrency: 2 });
    const before = await waitForTaskState(
      engine,
      taskIds.get('crash-before-boundary') as string,
      'cancelled',
      child,
    );
    const after = await waitForTaskState(
      engine,
      taskIds.get('crash-after-boundary') as string,
      'dead',
      child,
    );
    await worker.stop();

    const start = [
      { from: null, to: 'queued', reason: 'submitted', actor: 'client', attempt: 0 },
      {
        from: 'queued',
        to: 'leased',
        reason: 'lease_acquired',
        actor: `worker:${childHolder}`,
        attempt: 1,
      },
      {
        from: 'leased',
        to: 'cancel_requested',
        reason: 'cancel_requested',
        actor: 'client',
        attempt: 1,
      },
    ];
    expect(edges(before)).toEqual([
      ...start,
      {
        from: 'cancel_requested',
        to: 'cancelled',
        reason: 'lease_expired',
        actor: `sweeper:${engine.holder}`,
        attempt: 1,
      },
    ]);
    expect(edges(after)).toEqual([
      ...start,
      {
        from: 'cancel_requested',
        to: 'dead',
        reason: 'lease_expired_effect_uncertain',
        actor: `sweeper:${engine.holder}`,
        attempt: 1,
      },
    ]);
    expect(runs).toEqual([]);
    expect((await engine.getWorkflow(before.workflowId))?.state).toBe('cancelled');
    expect((await engine.getWorkflow(after.workflowId))?.state).toBe('dead');
    expect(await logMismatches(url)).toEqual([]);
  }, 90_000);
});
