/**
 * R54 with two engines in one process: v1 and v2 of one workflow. Submits take the latest
 * version an engine lists; a workflow's tasks are claimed only by an engine that defines its
 * version, and run that version's code; an engine never stalls behind another version's
 * tasks; `versions()` says where each version stands. Real workers, real PostgreSQL.
 */
import type { Engine } from '@causeway/engine';
import { workflow } from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

const database = useTestDatabase();
const url = () => database().url;

const input = z.object({ n: z.number().int() });
const v1 = workflow({ name: 'versioned', input, version: 'v1' })
  .step('render', { queue: 'q-versions', run: (ctx) => `v1:${ctx.input.n}` })
  .build();
// The newer version adds a step after `render`: only an engine that knows it can promote it.
const v2 = workflow({ name: 'versioned', input, version: 'v2' })
  .step('render', { queue: 'q-versions', run: (ctx) => `v2:${ctx.input.n}` })
  .step('announce', { after: ['render'], queue: 'q-versions', run: (ctx) => ctx.results.render })
  .build();

/** A review whose newer version notifies as well once approved: an event step in both. */
const reviewOf = (version: 'v1' | 'v2') => {
  const review = workflow({
    name: 'versioned-review',
    input: z.object({ key: z.string() }),
    version,
  })
    .event('approval', {
      name: 'versioned.approved',
      key: (ctx) => ctx.input.key,
      timeoutMs: 3_600_000,
    })
    .step('publish', {
      after: ['approval'],
      queue: 'q-versions',
      run: () => `${version} published`,
    });
  return version === 'v1'
    ? review.build()
    : review
        .step('notify', { after: ['approval'], queue: 'q-versions', run: () => 'v2 notified' })
        .build();
};

beforeAll(async () => {
  const setup = testEngine(url(), { workflows: [v1] });
  await setup.migrate();
  await setup.close();
});

async function versionOf(workflowId: string): Promise<string | null> {
  const [row] = await query<{ version: string | null }>(
    url(),
    'select version from causeway_workflows where id = $1',
    [workflowId],
  );
  return row?.version ?? null;
}

async function statesOf(engine: Engine, ids: readonly string[]): Promise<string[]> {
  return Promise.all(ids.map(async (id) => (await engine.getWorkflow(id))?.state ?? 'missing'));
}

async function outputsOf(engine: Engine, id: string): Promise<Record<string, unknown>> {
  const found = await engine.getWorkflow(id);
  return Object.fromEntries((found?.tasks ?? []).map((task) => [task.step, task.output]));
}

function succeeded(engine: Engine, ids: readonly string[], description: string) {
  return waitFor(
    async () => (await statesOf(engine, ids)).every((state) => state === 'succeeded'),
    { timeoutMs: 15_000, description },
  );
}

describe('two versions of one workflow on two engines (R54)', () => {
  it('submits take the latest listed; each version runs only on an engine that defines it', async () => {
    const older = testEngine(url(), { workflows: [v1] });
    const newer = testEngine(url(), { workflows: [v2] });
    const both = testEngine(url(), { workflows: [v1, v2] });
    expect(both.definitions.get('versioned')).toBe(v2);

    // v1 work first, more than a claim takes, so it is first in claim order.
    const olderRuns = await older.submitMany(
      Array.from({ length: 30 }, (_, n) => ({ name: 'versioned', input: { n } })),
    );
    const newerRun = await newer.submit('versioned', { n: 100 });
    const bothRun = await both.submit('versioned', { n: 200 });
    expect(await versionOf(olderRuns[0]?.workflow.id ?? '')).toBe('v1');
    expect(await versionOf(newerRun.workflow.id)).toBe('v2');
    expect(await versionOf(bothRun.workflow.id)).toBe('v2');

    // The v2 engine's worker, one slot, runs its own work behind 30 v1 tasks it leaves alone.
    const newerWorker = await newer.startWorker({ queues: ['q-versions'], concurrency: 1 });
    const newerIds = [newerRun.workflow.id, bothRun.workflow.id];
    await succeeded(newer, newerIds, 'the v2 workflows, on the v2 engine');
    expect(await outputsOf(newer, newerRun.workflow.id)).toEqual({
      render: 'v2:100',
      announce: 'v2:100',
    });
    const olderIds = olderRuns.map((run) => run.workflow.id);
    expect(new Set(await statesOf(newer, olderIds))).toEqual(new Set(['queued']));

    // A v1 task names the version no live worker defines.
    const [blocker] = (await newer.blockers(olderIds[0] ?? '')) ?? [];
    expect(blocker).toMatchObject({
      code: 'no_worker',
      facts: {
        workflow: 'versioned',
        version: 'v1',
        workers: [{ holder: newer.holder, versions: ['versioned@v2'] }],
      },
    });
    expect(blocker?.message).toContain(
      `no live worker serving queue "q-versions" defines version "v1" of workflow versioned (${newer.holder} defines versioned@v2)`,
    );
    // The answering engine's versions first, then those only stored work knows.
    expect(await newer.versions()).toEqual([
      {
        name: 'versioned',
        version: 'v2',
        defined: true,
        latest: true,
        inFlight: 0,
        workers: [newer.holder],
        status: 'serving',
      },
      {
        name: 'versioned',
        version: 'v1',
        defined: false,
        latest: false,
        inFlight: 30,
        workers: [],
        status: 'draining',
      },
    ]);

    // The v1 engine's worker runs them with v1's code; once it stops, v1 is drained.
    const olderWorker = await older.startWorker({ queues: ['q-versions'], concurrency: 4 });
    await succeeded(older, olderIds, 'the v1 workflows, on the v1 engine');
    expect(await outputsOf(older, olderIds[7] ?? '')).toEqual({ render: 'v1:7' });
    expect((await newer.versions()).find((each) => each.version === 'v1')).toMatchObject({
      inFlight: 0,
      workers: [older.holder],
      status: 'serving',
    });
    await olderWorker.stop();
    expect((await newer.versions()).find((each) => each.version === 'v1')).toMatchObject({
      inFlight: 0,
      workers: [],
      status: 'drained',
    });
    await newerWorker.stop();
    expect(await logMismatches(url())).toEqual([]);
  });

  it('an engine that lists both runs each workflow by the version it records', async () => {
    const older = testEngine(url(), { workflows: [v1] });
    const both = testEngine(url(), { workflows: [v1, v2] });
    const oldRun = await older.submit('versioned', { n: 1 });
    const newRun = await both.submit('versioned', { n: 2 });
    // A workflow stored before versions is taken by the latest version that has its steps.
    const legacyRun = await older.submit('versioned', { n: 3 });
    await query(url(), 'update causeway_workflows set version = null where id = $1', [
      legacyRun.workflow.id,
    ]);
    await both.startWorker({ queues: ['q-versions'], concurrency: 2 });
    const ids = [oldRun.workflow.id, newRun.workflow.id, legacyRun.workflow.id];
    await succeeded(both, ids, 'every workflow, each by its version');
    expect(await outputsOf(both, oldRun.workflow.id)).toEqual({ render: 'v1:1' });
    expect(await outputsOf(both, newRun.workflow.id)).toEqual({
      render: 'v2:2',
      announce: 'v2:2',
    });
    expect(await outputsOf(both, legacyRun.workflow.id)).toEqual({ render: 'v2:3' });
    const listed = await both.versions();
    expect(listed.map(({ version, status, workers }) => ({ version, status, workers }))).toEqual([
      { version: 'v1', status: 'drained', workers: [both.holder] },
      { version: 'v2', status: 'serving', workers: [both.holder] },
    ]);
    expect(await logMismatches(url())).toEqual([]);
  });

  it('one event completes the waits of both versions, each going on by its own version', async () => {
    const older = testEngine(url(), { workflows: [reviewOf('v1')] });
    const both = testEngine(url(), { workflows: [reviewOf('v1'), reviewOf('v2')] });
    const oldRun = await older.submit('versioned-review', { key: 'k1' });
    const newRun = await both.submit('versioned-review', { key: 'k1' });
    expect([await versionOf(oldRun.workflow.id), await versionOf(newRun.workflow.id)]).toEqual([
      'v1',
      'v2',
    ]);
    await both.startWorker({ queues: ['q-versions'], concurrency: 2 });
    // The engine that serves both versions completes both waits at once.
    const sent = await both.sendEvent('versioned.approved', 'k1', { ok: true });
    expect(sent.tasks.map((task) => task.workflowId).sort()).toEqual(
      [oldRun.workflow.id, newRun.workflow.id].sort(),
    );
    const ids = [oldRun.workflow.id, newRun.workflow.id];
    await succeeded(both, ids, 'both reviews, each by its version');
    expect(await outputsOf(both, oldRun.workflow.id)).toEqual({
      approval: { ok: true },
      publish: 'v1 published',
    });
    expect(await outputsOf(both, newRun.workflow.id)).toEqual({
      approval: { ok: true },
      publish: 'v2 published',
      notify: 'v2 notified',
    });
    expect(await logMismatches(url())).toEqual([]);
  });
});
