import type { Engine, WorkerView } from '@causeway/engine';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { sentence } from '../helpers/sentences';
import { waitFor } from '../helpers/wait-for';
import { isMessage, spawnFixture } from './fixtures/children';
import { crashWorkflows } from './fixtures/crash-workflows';

/**
 * A worker process SIGKILLed mid-lease (issue 18): its registry row stops heartbeating and
 * ages out, its leases become `lease_stale` with what the sweeper will do, and the sweeper
 * then does exactly that. Long-stale rows are pruned.
 */
const database = useTestDatabase();

/** The child's lease outlives the test's look at it; its registry row ages out in a second. */
const childLeaseMs = 60_000;
const childHeartbeatMs = 200;
const childAgeOutMs = 1_000;

function parentEngine(url: string): Engine {
  return testEngine(url, {
    leaseMs: 2_000,
    workerHeartbeatMs: 100,
    workerAgeOutMs: 1_000,
    // The parent's own re-runs finish at once.
    workflows: crashWorkflows({ reached: async () => undefined }),
  });
}

async function rowOf(engine: Engine, holder: string): Promise<WorkerView | undefined> {
  return (await engine.workers({ includeStale: true })).find((row) => row.holder === holder);
}

async function stepBlocker(engine: Engine, workflowId: string) {
  const [blocker] = (await engine.blockers(workflowId)) ?? [];
  return blocker;
}

describe('a worker SIGKILLed mid-lease', () => {
  it('ages out of the registry; its leases are lease_stale with what the sweeper then does, and it does that', async () => {
    const url = database().url;
    const engine = parentEngine(url);
    await engine.migrate();
    const child = spawnFixture('crash-worker.ts', {
      CAUSEWAY_CHILD_DATABASE_URL: url,
      CAUSEWAY_CHILD_LEASE_MS: String(childLeaseMs),
      CAUSEWAY_CHILD_CONCURRENCY: '4',
      CAUSEWAY_CHILD_HEARTBEAT_MS: String(childHeartbeatMs),
      CAUSEWAY_CHILD_AGE_OUT_MS: String(childAgeOutMs),
    });
    const { holder, pid } = await child.ready(60_000);
    const ids = new Map<string, string>();
    for (const name of ['crash-reentrant', 'crash-after-boundary']) {
      const { workflow } = await engine.submit(name, { label: name });
      await child.waitForMessage(
        isMessage('reached', (message) => message.workflowId === workflow.id),
        { description: `${name} reaching its point of interest` },
      );
      ids.set(name, workflow.id);
    }
    const reentrant = ids.get('crash-reentrant') as string;
    const boundary = ids.get('crash-after-boundary') as string;

    // Alive: registered with what it serves, heartbeating, and its tasks are running.
    const registered = await rowOf(engine, holder);
    expect(registered).toMatchObject({
      holder,
      pid,
      queues: [{ name: 'default', slots: 4 }],
      sweeper: false,
      live: true,
      version: `causeway ${registered?.engineVersion}`,
    });
    expect(registered?.workflows.map((workflow) => workflow.name)).toEqual([
      'crash-reentrant',
      'crash-after-boundary',
      'crash-after-checkpoint',
      'crash-before-boundary',
    ]);
    const beat = await waitFor(
      async () => {
        const row = await rowOf(engine, holder);
        return row !== undefined && row.heartbeatAt > (registered as WorkerView).heartbeatAt
          ? row
          : undefined;
      },
      { description: "the child's next heartbeat" },
    );
    expect(beat.staleAt.getTime() - beat.heartbeatAt.getTime()).toBe(childAgeOutMs);
    expect(beat.startedAt).toEqual(registered?.startedAt);
    expect((await stepBlocker(engine, reentrant))?.code).toBe('running');

    expect((await child.kill()).signal).toBe('SIGKILL');
    const gone = await waitFor(
      async () => {
        const row = await rowOf(engine, holder);
        return row?.live === false ? row : undefined;
      },
      { description: "the killed child's row to age out" },
    );
    expect((await engine.workers()).map((row) => row.holder)).not.toContain(holder);

    const stale = await stepBlocker(engine, reentrant);
    const [task] = (await engine.getWorkflow(reentrant))?.tasks ?? [];
    expect(task?.state).toBe('leased');
    expect(stale).toMatchObject({
      code: 'lease_stale',
      until: task?.leaseExpiresAt,
      facts: {
        holder,
        heartbeatAt: gone.heartbeatAt.toISOString(),
        leaseExpiresAt: task?.leaseExpiresAt?.toISOString(),
        reason: 'lease_expired',
        attempt: 1,
      },
    });
    expect(stale?.facts.then).toBe('retry');
    expect(stale?.message).toMatch(
      sentence(
        `work: leased by ${holder}, whose worker stopped heartbeating at <time> (<n> s ago) (attempt 1); the lease expires at <time>, then the sweeper queues it again for attempt 2 of 3 (lease_expired); but no live worker runs the sweeper, so nothing acts on it until one starts`,
      ),
    );
    const uncertain = await stepBlocker(engine, boundary);
    expect(uncertain).toMatchObject({
      code: 'lease_stale',
      facts: { holder, reason: 'lease_expired_effect_uncertain' },
    });
    expect(uncertain?.facts.then).toBe('dead');
    expect(uncertain?.message).toContain(
      'then the sweeper marks it dead (lease_expired_effect_uncertain: its effect started and the step is not reentrant, so it is never run again blindly)',
    );

    // Past the lease's expiry: the sweeper's next pass acts, and does what was said.
    await setDatabaseClockOffset(url, childLeaseMs + 1_000);
    const expired = await stepBlocker(engine, reentrant);
    expect(expired?.code).toBe('lease_stale');
    expect(expired?.message).toContain('the lease expired at ');
    expect(expired?.message).toContain(", so the sweeper's next pass queues it again");
    const worker = await engine.startWorker({ concurrency: 2 });
    await waitFor(async () => (await engine.getWorkflow(reentrant))?.state === 'succeeded', {
      timeoutMs: 15_000,
      description: 'the re-run',
    });
    await waitFor(async () => (await engine.getWorkflow(boundary))?.state === 'dead', {
      timeoutMs: 15_000,
      description: 'the dead end',
    });
    const rerun = (await engine.getWorkflow(reentrant))?.tasks[0]?.transitions ?? [];
    expect(rerun.map((row) => row.reason)).toEqual([
      'submitted',
      'lease_acquired',
      stale?.facts.reason,
      'lease_acquired',
      'completed',
    ]);
    expect(rerun[3]?.attempt).toBe(2);
    const deadEnd = (await engine.getWorkflow(boundary))?.tasks[0]?.transitions.at(-1);
    expect(deadEnd).toMatchObject({ to: 'dead', reason: uncertain?.facts.reason });

    // An hour after it went stale, any heartbeat prunes the row; the live one stays.
    expect(await rowOf(engine, holder)).toBeDefined();
    await setDatabaseClockOffset(url, childLeaseMs + 2 * 3_600_000);
    await waitFor(async () => (await rowOf(engine, holder)) === undefined, {
      description: "a heartbeat pruning the dead child's row",
    });
    expect((await engine.workers()).map((row) => row.holder)).toEqual([engine.holder]);
    await worker.stop();
  }, 90_000);
});
