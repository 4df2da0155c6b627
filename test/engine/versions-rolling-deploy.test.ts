/**
 * R54, a rolling deploy with real processes: a v1 worker process and a v2 worker process of a
 * service whose note starts child workflows and waits for an approval. In-flight v1 work, its
 * wait included, finishes on the v1 worker while new submits take v2; an approval sent to a v2
 * engine completes the v1 wait; with the v1 worker SIGKILLed, a v1 task's blocker says no live
 * worker defines v1; a restarted v1 worker finishes it, and v1 is drained once it stops.
 */
import type { Engine } from '@causeway/engine';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { spawnFixture } from './fixtures/children';
import { type DeployVersion, deployWorkflows } from './fixtures/rolling-deploy-workflows';

const database = useTestDatabase();
const url = () => database().url;

/** A worker process of one version; its registry row ages out a second after it dies. */
function deployWorker(version: DeployVersion) {
  return spawnFixture(
    'deploy-worker.ts',
    {
      CAUSEWAY_CHILD_DATABASE_URL: url(),
      CAUSEWAY_DEPLOY_VERSION: version,
      CAUSEWAY_CHILD_HEARTBEAT_MS: '200',
      CAUSEWAY_CHILD_AGE_OUT_MS: '1000',
    },
    `${version} worker`,
  );
}

interface Row extends Record<string, unknown> {
  readonly step: string;
  readonly state: string;
  readonly version: string | null;
  readonly actor: string;
}

/** Each task of the workflow and of its children: state, version and the last edge's actor. */
async function treeOf(workflowId: string): Promise<Row[]> {
  return query<Row>(
    url(),
    `select coalesce(w.child_index::text || '.', '') || t.step as step, t.state, w.version,
        (select l.actor from causeway_transitions as l
          where l.workflow_id = t.workflow_id and l.task_id = t.id order by l.id desc limit 1)
          as actor
       from causeway_workflows as w join causeway_tasks as t on t.workflow_id = w.id
      where w.id = $1 or w.parent_workflow_id = $1
      order by w.child_index nulls first, t.step`,
    [workflowId],
  );
}

async function stepState(engine: Engine, workflowId: string, step: string) {
  return (await engine.getWorkflow(workflowId))?.tasks.find((task) => task.step === step)?.state;
}

function waitingForApproval(engine: Engine, workflowId: string) {
  return waitFor(async () => (await stepState(engine, workflowId, 'approval')) === 'waiting', {
    timeoutMs: 20_000,
    description: `workflow ${workflowId} waiting for its approval`,
  });
}

function finished(engine: Engine, workflowId: string) {
  return waitFor(
    async () => {
      const found = await engine.getWorkflow(workflowId);
      return found?.state === 'succeeded' ? found : undefined;
    },
    { timeoutMs: 20_000, description: `workflow ${workflowId} succeeded` },
  );
}

describe('a rolling deploy with real processes (R54)', () => {
  it('finishes v1 work on the v1 worker while new submits take v2, and drains v1', async () => {
    // The old service's engine (its submits record v1) and the new one's, which takes the
    // approvals: neither runs a worker here.
    const oldService = testEngine(url(), { workflows: deployWorkflows('v1') });
    const newService = testEngine(url(), { workflows: deployWorkflows('v2') });
    await newService.migrate();
    const v1Worker = deployWorker('v1');
    const v2Worker = deployWorker('v2');
    const v1Holder = (await v1Worker.ready(60_000)).holder;
    const v2Holder = (await v2Worker.ready(60_000)).holder;

    const old = await oldService.submit('deploy-note', { noteId: 'old' });
    await waitingForApproval(oldService, old.workflow.id);
    const fresh = await newService.submit('deploy-note', { noteId: 'fresh' });
    await waitingForApproval(newService, fresh.workflow.id);

    // Each version's children record it and ran on its worker.
    const oldTree = await treeOf(old.workflow.id);
    expect(oldTree.filter((row) => row.step.endsWith('render'))).toEqual([
      { step: '0.render', state: 'succeeded', version: 'v1', actor: `worker:${v1Holder}` },
      { step: '1.render', state: 'succeeded', version: 'v1', actor: `worker:${v1Holder}` },
    ]);
    const freshTree = await treeOf(fresh.workflow.id);
    expect(freshTree.filter((row) => row.step.endsWith('render')).map((row) => row.actor)).toEqual([
      `worker:${v2Holder}`,
      `worker:${v2Holder}`,
    ]);
    expect(new Set(freshTree.map((row) => row.version))).toEqual(new Set(['v2']));

    // The approval of the v1 note reaches the new service: it stores it and leaves the wait;
    // the v1 worker's sweeper completes it and runs v1's publish.
    const sent = await newService.sendEvent('deploy.approved', 'old', { editor: 'ann' });
    expect(sent.tasks).toEqual([]);
    const oldDone = await finished(oldService, old.workflow.id);
    expect(oldDone.tasks.find((task) => task.step === 'publish')?.output).toEqual({
      version: 'v1',
      parts: ['v1:part1', 'v1:part2'],
      editor: 'ann',
    });
    const approval = oldDone.tasks.find((task) => task.step === 'approval');
    expect(approval?.transitions.at(-1)).toMatchObject({
      reason: 'event_received',
      actor: 'client',
    });
    await newService.sendEvent('deploy.approved', 'fresh', { editor: 'bo' });
    const freshDone = await finished(newService, fresh.workflow.id);
    expect(freshDone.tasks.find((task) => task.step === 'publish')?.output).toMatchObject({
      version: 'v2',
      parts: ['v2:part1', 'v2:part2'],
    });

    // The v1 worker dies. A v1 note submitted now has no live worker that defines v1.
    await v1Worker.kill();
    const stranded = await oldService.submit('deploy-note', { noteId: 'stranded' });
    const blocker = await waitFor(
      async () => {
        const [first] = (await newService.blockers(stranded.workflow.id)) ?? [];
        return first?.code === 'no_worker' ? first : undefined;
      },
      { timeoutMs: 10_000, description: 'no_worker once the v1 worker aged out' },
    );
    expect(blocker.facts).toMatchObject({ workflow: 'deploy-note', version: 'v1', step: 'parts' });
    expect(blocker.message).toContain(
      `no live worker serving queue "deploy" defines version "v1" of workflow deploy-note (${v2Holder} defines deploy-part@v2, deploy-note@v2)`,
    );
    expect((await newService.versions()).filter((each) => each.name === 'deploy-note')).toEqual([
      expect.objectContaining({ version: 'v2', status: 'serving', workers: [v2Holder] }),
      expect.objectContaining({ version: 'v1', status: 'draining', inFlight: 1, workers: [] }),
    ]);
    // The v2 worker never took it.
    expect(await stepState(newService, stranded.workflow.id, 'parts')).toBe('queued');

    // A v1 worker again: it finishes the note, its wait completed by an approval sent to v2.
    const restarted = deployWorker('v1');
    const restartedHolder = (await restarted.ready(60_000)).holder;
    await waitingForApproval(oldService, stranded.workflow.id);
    await newService.sendEvent('deploy.approved', 'stranded', { editor: 'cy' });
    const strandedDone = await finished(oldService, stranded.workflow.id);
    expect(strandedDone.tasks.find((task) => task.step === 'publish')?.output).toEqual({
      version: 'v1',
      parts: ['v1:part1', 'v1:part2'],
      editor: 'cy',
    });
    expect(strandedDone.tasks.find((task) => task.step === 'parts')?.transitions).toContainEqual(
      expect.objectContaining({ reason: 'lease_acquired', actor: `worker:${restartedHolder}` }),
    );
    // Nothing of v1 is in flight; once its last worker stops, no engine serves it: drained.
    await restarted.stop();
    expect((await newService.versions()).filter((each) => each.name === 'deploy-note')).toEqual([
      expect.objectContaining({ version: 'v2', status: 'serving', inFlight: 0 }),
      expect.objectContaining({ version: 'v1', status: 'drained', inFlight: 0, workers: [] }),
    ]);
    await v2Worker.stop();
    expect(await logMismatches(url())).toEqual([]);
  }, 180_000);
});
