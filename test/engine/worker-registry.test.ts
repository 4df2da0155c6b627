import { hostname } from 'node:os';
import type { Engine, WorkerView } from '@causeway/engine';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { publishNote } from '../../examples/publish-note/workflow';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

/**
 * The worker registry (issue 18): each engine running workers keeps one row, written before
 * its first claim, heartbeated on its own timer, rewritten as its workers change, deleted at a
 * clean shutdown; a heartbeat that fails is logged and retried and never stops the worker.
 */
const database = useTestDatabase();
const url = () => database().url;

const fastBeats = { workerHeartbeatMs: 50, workerAgeOutMs: 500 };

beforeAll(async () => {
  const setup = testEngine(url(), { workflows: [publishNote] });
  await setup.migrate();
  await setup.close();
});

async function rowOf(engine: Engine): Promise<WorkerView | undefined> {
  return (await engine.workers({ includeStale: true })).find((row) => row.holder === engine.holder);
}

describe('the worker registry', () => {
  it('registers what the worker serves, heartbeats it, and deletes it at a clean shutdown', async () => {
    const engine = testEngine(url(), {
      workflows: [publishNote],
      appVersion: '2.3.4',
      ...fastBeats,
    });
    await engine.migrate();
    expect(await engine.workers()).toEqual([]);
    const worker = await engine.startWorker({ queues: ['cpu', 'network'], concurrency: 3 });
    const row = await rowOf(engine);
    expect(row).toMatchObject({
      holder: engine.holder,
      host: hostname(),
      pid: process.pid,
      queues: [
        { name: 'cpu', slots: 3 },
        { name: 'network', slots: 3 },
      ],
      workflows: [{ name: 'publish-note', steps: ['render', 'review', 'publish'] }],
      sweeper: true,
      appVersion: '2.3.4',
      live: true,
    });
    expect(row?.engineVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(row?.version).toBe(`2.3.4 (causeway ${row?.engineVersion})`);
    expect(row?.startedAt.getTime()).toBeLessThanOrEqual(row?.heartbeatAt.getTime() ?? 0);

    const later = await waitFor(
      async () => {
        const next = await rowOf(engine);
        return next !== undefined && next.heartbeatAt > (row as WorkerView).heartbeatAt
          ? next
          : undefined;
      },
      { description: 'a heartbeat' },
    );
    expect(later.startedAt).toEqual(row?.startedAt);
    expect(later.staleAt.getTime() - later.heartbeatAt.getTime()).toBe(500);

    await worker.stop();
    expect(await engine.workers({ includeStale: true })).toEqual([]);
  });

  it("sums the slots of an engine's workers, and keeps the row until the last one stops", async () => {
    const engine = testEngine(url(), { workflows: [publishNote], ...fastBeats });
    const cpu = await engine.startWorker({ queues: ['cpu'], concurrency: 2, sweeper: false });
    const both = await engine.startWorker({
      queues: ['cpu', 'network'],
      concurrency: { cpu: 1, network: 4 },
      sweeper: false,
    });
    expect(await rowOf(engine)).toMatchObject({
      queues: [
        { name: 'cpu', slots: 3 },
        { name: 'network', slots: 4 },
      ],
      sweeper: false,
    });
    await cpu.stop();
    expect(await rowOf(engine)).toMatchObject({
      queues: [
        { name: 'cpu', slots: 1 },
        { name: 'network', slots: 4 },
      ],
      live: true,
    });
    await both.stop();
    expect(await rowOf(engine)).toBeUndefined();
    // Closing the engine stops its workers cleanly too.
    await engine.startWorker({ queues: ['cpu'], concurrency: 1 });
    expect(await rowOf(engine)).toBeDefined();
    await engine.close();
    const [left] = await query<{ n: number }>(
      url(),
      'select count(*)::int as n from causeway_workers',
    );
    expect(left?.n).toBe(0);
  });

  it('survives a failing heartbeat: logs it, keeps working, and comes back when it can', async () => {
    const lines: { msg?: string; level: number }[] = [];
    const logger = pino(
      { level: 'warn' },
      { write: (chunk: string) => void lines.push(JSON.parse(chunk)) },
    );
    const engine = testEngine(url(), { workflows: [publishNote], logger, ...fastBeats });
    await engine.startWorker({ concurrency: 2 });
    const before = await rowOf(engine);
    // The table is gone for a while: every heartbeat fails.
    await query(url(), 'alter table causeway_workers rename to causeway_workers_away');
    try {
      await waitFor(
        () => lines.some((line) => line.msg?.startsWith('worker registry write failed') === true),
        { description: 'a failed heartbeat logged' },
      );
      const { workflow } = await engine.submit('publish-note', { noteId: 'away', version: 1 });
      await waitFor(async () => (await engine.getWorkflow(workflow.id))?.state === 'succeeded', {
        description: 'the worker runs a workflow meanwhile',
      });
    } finally {
      await query(url(), 'alter table causeway_workers_away rename to causeway_workers');
    }
    await waitFor(
      async () => {
        const row = await rowOf(engine);
        return row !== undefined && row.heartbeatAt > (before as WorkerView).heartbeatAt;
      },
      { description: 'heartbeats again' },
    );
    // A row removed behind its back (as a prune would) is written again by the next heartbeat.
    await query(url(), 'delete from causeway_workers where holder = $1', [engine.holder]);
    const back = await waitFor(() => rowOf(engine), { description: 'registered again' });
    expect(back).toMatchObject({ live: true, queues: before?.queues });
    expect(
      lines.some((line) => line.msg === 'worker registry row was gone; registering again'),
    ).toBe(true);
  });

  it('refuses an age-out shorter than two heartbeats', () => {
    expect(() =>
      testEngine(url(), {
        workflows: [publishNote],
        workerHeartbeatMs: 1_000,
        workerAgeOutMs: 1_500,
      }),
    ).toThrow('workerAgeOutMs (1500) must be at least twice workerHeartbeatMs (1000)');
    expect(() => testEngine(url(), { workflows: [publishNote], workerHeartbeatMs: 0 })).toThrow(
      RangeError,
    );
  });
});
