/**
 * R48, seeing the tree, through the engine's reads on a real tree of three levels started by
 * real workers: a root whose step starts two middle workflows, each of whose step starts leaves
 * that wait for an event (one leaf fails at once, within its parent's tolerance). What is
 * checked against is what the contract says, and the stored rows read directly.
 */
import { createReadModel, type Engine, type WorkflowView } from '@causeway/engine';
import type { Blocker } from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { treeWorkflows as workflows } from './tree-workflows';

const database = useTestDatabase();
const url = () => database().url;

beforeAll(async () => {
  const setup = testEngine(url(), { workflows });
  await setup.migrate();
  await setup.close();
});

type Stored = {
  id: string;
  name: string;
  state: string;
  child_index: number | null;
  depth: number;
};

/** The tree below `rootId` as stored, by depth, then its parent's index, then its own. */
function below(rootId: string): Promise<Stored[]> {
  return query<Stored>(
    url(),
    `select w.id, w.name, w.state, w.child_index, w.depth from causeway_workflows as w
       join causeway_workflows as p on p.id = w.parent_workflow_id
      where w.root_workflow_id = $1 order by w.depth, p.child_index nulls first, w.child_index`,
    [rootId],
  );
}

async function view(app: Engine, id: string): Promise<WorkflowView> {
  const found = await app.getWorkflow(id);
  if (found === undefined) throw new Error(`no workflow ${id}`);
  return found;
}

describe('the tree through the engine', () => {
  it('gives parents, counts, pages, lists, the narrative and the blockers of every level', async () => {
    const app = testEngine(url(), { workflows });
    const worker = await app.startWorker({ queues: ['q-tree'], concurrency: 8 });
    const { workflow: top } = await app.submit('tree-root', { groups: [[-1, 1, 2], [3]] });
    // Three leaves waiting for their event and one dead: the tree stops moving there.
    const stored = await waitFor(
      async () => {
        const rows = await below(top.id);
        const leaves = rows.filter((row) => row.depth === 2);
        const states = leaves.map((row) => row.state).sort();
        return states.join() === 'dead,waiting,waiting,waiting' ? rows : undefined;
      },
      { timeoutMs: 15_000, description: 'three leaves waiting, one dead' },
    );
    const [mid0, mid1] = stored.filter((row) => row.depth === 1);
    const leaves = stored.filter((row) => row.depth === 2);
    if (mid0 === undefined || mid1 === undefined) throw new Error('two middle workflows');
    const [dead, one, two, three] = leaves;
    expect(leaves.map((row) => row.child_index)).toEqual([0, 1, 2, 0]);

    // Parents: none for the root; the step, task, index, root and depth for each child.
    const topView = await view(app, top.id);
    const spread = topView.tasks.find((task) => task.step === 'spread');
    expect(topView.parent).toBeNull();
    expect((await view(app, mid1.id)).parent).toEqual({
      workflowId: top.id,
      name: 'tree-root',
      step: 'spread',
      taskId: spread?.id,
      index: 1,
      rootId: top.id,
      depth: 1,
      detached: false,
    });
    const mid0View = await view(app, mid0.id);
    const fan = mid0View.tasks.find((task) => task.step === 'fan');
    expect((await view(app, two?.id as string)).parent).toEqual({
      workflowId: mid0.id,
      name: 'tree-mid',
      step: 'fan',
      taskId: fan?.id,
      index: 2,
      rootId: top.id,
      depth: 2,
      detached: false,
    });

    // Counts per step: the tally and the children by state; nothing for steps without any.
    const none = { queued: 0, running: 0, waiting: 0, cancel_requested: 0 };
    const ended = { succeeded: 0, cancelled: 0, dead: 0 };
    expect(mid0View.childCounts).toEqual([
      expect.objectContaining({
        step: 'fan',
        taskId: fan?.id,
        workflows: ['tree-leaf'],
        total: 3,
        succeeded: 0,
        failed: 1,
        unfinished: 2,
        allowedFailures: 2,
        detached: 0,
        byState: { ...none, ...ended, waiting: 2, dead: 1 },
      }),
    ]);
    expect(topView.childCounts).toEqual([
      expect.objectContaining({
        step: 'spread',
        total: 2,
        failed: 0,
        allowedFailures: 0,
        byState: { ...none, ...ended, running: 2 },
      }),
    ]);

    // The narrative says what the step awaits.
    const line =
      'fan: awaiting 3 child workflows of tree-leaf: 2 waiting, 1 dead (tolerated 1 of 2)';
    const explanation = await app.explain(mid0.id);
    expect(explanation.children).toEqual([line]);
    expect(explanation.text).toContain(line);
    expect((await app.explain(top.id)).children).toEqual([
      'spread: awaiting 2 child workflows of tree-mid: 2 running',
    ]);

    // Blockers follow the first unfinished child down to the leaf that holds the tree.
    const blockers = (await app.blockers(top.id)) as Blocker[];
    const spreadBlocker = blockers.find((blocker) => blocker.step === 'spread');
    expect(spreadBlocker?.code).toBe('children_pending');
    expect(spreadBlocker?.facts).toMatchObject({ total: 2, open: 2, succeeded: 0, failed: 0 });
    const midFacts = spreadBlocker?.facts.oldest as {
      workflowId: string;
      state: string;
      blocker: Blocker;
    };
    expect([midFacts.workflowId, midFacts.state, midFacts.blocker.code]).toEqual([
      mid0.id,
      'running',
      'children_pending',
    ]);
    // Its first unfinished child is index 1: index 0 is dead, within the tolerance.
    const leafFacts = midFacts.blocker.facts.oldest as { workflowId: string; blocker: Blocker };
    expect(leafFacts.workflowId).toBe(one?.id);
    expect(leafFacts.blocker.code).toBe('waiting_for_event');
    expect(spreadBlocker?.message).toContain('tree.release');
    expect(blockers.find((blocker) => blocker.step === 'report')?.code).toBe('upstream_pending');

    // Pages of children in (step, index) order; a state filter; a step no child has.
    const first = await app.children(mid0.id, { limit: 2 });
    expect(first.rows.map((row) => row.workflow.id)).toEqual([dead?.id, one?.id]);
    expect(first.hasMore).toBe(true);
    const next = await app.children(mid0.id, { limit: 2, after: first.rows.at(-1)?.key ?? null });
    expect([next.rows.map((row) => row.workflow.id), next.hasMore]).toEqual([[two?.id], false]);
    const waiting = await app.children(mid0.id, { states: ['waiting'] });
    expect(waiting.rows.map((row) => row.workflow.id)).toEqual([one?.id, two?.id]);
    expect((await app.children(mid0.id, { step: 'elsewhere' })).rows).toEqual([]);
    expect((await app.children(top.id)).rows.map((row) => row.workflow.id)).toEqual([
      mid0.id,
      mid1.id,
    ]);

    // The list by parent and by root, with a state, and its counts.
    const reads = createReadModel(app.db);
    const ids = async (filter: Parameters<typeof reads.workflowPage>[0]) =>
      (await reads.workflowPage(filter, { limit: 50, order: 'oldest_first' })).rows
        .map((row) => row.workflow.id)
        .sort();
    expect(await ids({ parentId: mid0.id })).toEqual(
      [dead?.id, one?.id, two?.id].map(String).sort(),
    );
    expect(await ids({ rootId: top.id })).toEqual(stored.map((row) => row.id).sort());
    expect(await ids({ rootId: top.id, states: ['dead'] })).toEqual([dead?.id]);
    expect(await reads.workflowCount({ rootId: top.id }, 100)).toBe(6);
    expect(await ids({ parentId: 'not-a-uuid' })).toEqual([]);

    // No result before the tree has succeeded.
    expect(topView.result).toBeNull();
    expect((await view(app, dead?.id as string)).result).toBeNull();

    for (const n of [1, 2, 3]) await app.sendEvent('tree.release', String(n), { n });
    const done = await waitFor(
      async () => {
        const found = await view(app, top.id);
        return found.state === 'succeeded' ? found : undefined;
      },
      { timeoutMs: 15_000, description: 'the root succeeded' },
    );
    await worker.stop();
    // R45: its only sink step's output; a leaf's is its event's payload.
    expect(done.result).toBe('2 groups');
    expect((await view(app, three?.id as string)).result).toEqual({ n: 3 });
    expect((await view(app, mid0.id)).result).toEqual([
      expect.objectContaining({ workflowId: dead?.id, state: 'dead' }),
      expect.objectContaining({ workflowId: one?.id, state: 'succeeded', result: { n: 1 } }),
      expect.objectContaining({ workflowId: two?.id, state: 'succeeded', result: { n: 2 } }),
    ]);
    expect(await app.blockers(top.id)).toEqual([]);
    expect((await app.explain(mid0.id)).children).toEqual([]);
    expect(await logMismatches(url())).toEqual([]);
  });

  it('counts detached children apart: not awaited, no tally', async () => {
    const app = testEngine(url(), { workflows });
    const worker = await app.startWorker({ queues: ['q-tree'], concurrency: 4 });
    const { workflow: fired } = await app.submit('tree-launcher', {});
    const launched = await waitFor(
      async () => {
        const found = await view(app, fired.id);
        const counts = found.childCounts[0];
        return found.state === 'succeeded' && counts?.byState.waiting === 2 ? found : undefined;
      },
      { timeoutMs: 15_000, description: 'the launcher succeeded, its children waiting' },
    );
    await worker.stop();
    expect(launched.childCounts).toEqual([
      expect.objectContaining({ step: 'fire', total: 2, detached: 2, tally: null, unfinished: 2 }),
    ]);
    const [child] = (await app.children(fired.id)).rows;
    expect(child?.workflow.parent).toMatchObject({ detached: true, index: 0, depth: 1 });
    // The step succeeded at once: nothing waits for the children, so no blocker follows them.
    expect(await app.blockers(fired.id)).toEqual([]);
  });
});
