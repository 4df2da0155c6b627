/**
 * R48 over real HTTP: `Workflow.parent`, `Workflow.children` (a connection with its cursors,
 * state and step filters and bounded count), `Workflow.childCounts`, `Workflow.result`, the
 * explanation's children line, the blockers down the tree, and `workflows(parentId, rootId)`,
 * on a tree of three levels run by a real worker. Bad arguments answer BAD_USER_INPUT, and a
 * connection of children is costed like the list it is.
 */
import { createApiServer } from '@causeway/api';
import { createEngine, type Engine } from '@causeway/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultQueryLimits } from '../../packages/api/src/limits';
import { treeAtRest } from '../engine/tree-waits';
import { treeWorkflows } from '../engine/tree-workflows';
import { useTestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { data, gql, operators, silentLogger } from './helpers';

const database = useTestDatabase();

/** One server for the file (the helpers' servers close after each test; this tree is shared). */
let api: { url: string; engine: Engine };
let root = '';
/** The middle workflows and the leaves of the first, by their index among their step's children. */
let mids: string[] = [];
let leaves: string[] = [];
let stop: () => Promise<void> = async () => undefined;

beforeAll(async () => {
  const engine = createEngine({
    databaseUrl: database().url,
    workflows: treeWorkflows,
    logger: silentLogger(),
    sweepIntervalMs: 100,
    pollIntervalMs: 200,
  });
  await engine.migrate();
  const worker = await engine.startWorker({ queues: ['q-tree'], concurrency: 8 });
  const server = createApiServer({
    engine,
    workflows: treeWorkflows,
    operators,
    databaseUrl: database().url,
    logger: silentLogger(),
    mode: 'production',
    feed: { pollIntervalMs: 500 },
  });
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' });
  api = { url: `http://127.0.0.1:${port}/graphql`, engine };
  stop = async () => {
    await server.close();
    await worker.stop({ drainMs: 1_000 });
    await engine.close();
  };
  root = (await engine.submit('tree-root', { groups: [[-1, 1, 2], [3]] })).workflow.id;
  ({ mids, leaves } = await treeAtRest(database().url, root));
}, 60_000);
afterAll(() => stop());

type Edge = { cursor: string; node: { id: string } };
type Connection = {
  totalCount: number;
  totalCountCapped: boolean;
  edges: Edge[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
};

const childrenPage = `query ($id: ID!, $first: Int, $after: String, $state: [WorkflowState!], $step: String) {
  workflow(id: $id) {
    children(first: $first, after: $after, state: $state, step: $step) {
      totalCount totalCountCapped edges { cursor node { id } } pageInfo { hasNextPage endCursor }
    }
  }
}`;

async function children(variables: Record<string, unknown>): Promise<Connection> {
  return (await data<{ workflow: { children: Connection } }>(api.url, childrenPage, { variables }))
    .workflow.children;
}

describe('the tree over GraphQL', () => {
  it('gives a child its parent, step, task, index, root and depth', async () => {
    const leaf = leaves[2] as string;
    const answer = await data<{
      workflow: { parent: Record<string, unknown> };
      root: { parent: null };
    }>(
      api.url,
      `query ($id: ID!, $root: ID!) {
        workflow(id: $id) {
          parent { workflow { id name } step task { id step state } index root { id } depth detached }
        }
        root: workflow(id: $root) { parent { depth } }
      }`,
      { variables: { id: leaf, root } },
    );
    const [fan] = await query<{ id: string }>(
      database().url,
      `select id from causeway_tasks where workflow_id = $1 and step = 'fan'`,
      [mids[0]],
    );
    expect(answer.root.parent).toBeNull();
    expect(answer.workflow.parent).toEqual({
      workflow: { id: mids[0], name: 'tree-mid' },
      step: 'fan',
      task: { id: fan?.id, step: 'fan', state: 'AWAITING_CHILDREN' },
      index: 2,
      root: { id: root },
      depth: 2,
      detached: false,
    });
  });

  it('pages through the children in index order, by state and by step, with their count', async () => {
    const mid = mids[0] as string;
    const first = await children({ id: mid, first: 2 });
    expect(first.edges.map((edge) => edge.node.id)).toEqual(leaves.slice(0, 2));
    expect([first.totalCount, first.totalCountCapped, first.pageInfo.hasNextPage]).toEqual([
      3,
      false,
      true,
    ]);
    const second = await children({ id: mid, first: 2, after: first.pageInfo.endCursor });
    expect(second.edges.map((edge) => edge.node.id)).toEqual(leaves.slice(2));
    expect(second.pageInfo.hasNextPage).toBe(false);
    const waiting = await children({ id: mid, state: ['WAITING'] });
    expect([waiting.edges.map((edge) => edge.node.id), waiting.totalCount]).toEqual([
      leaves.slice(1),
      2,
    ]);
    expect((await children({ id: mid, step: 'other' })).totalCount).toBe(0);
    expect(
      (await children({ id: root, step: 'spread' })).edges.map((edge) => edge.node.id),
    ).toEqual(mids);
    const none = await children({ id: leaves[1], first: 0 });
    expect([none.edges, none.totalCount, none.pageInfo.hasNextPage]).toEqual([[], 0, false]);
  });

  it('counts children per step, explains the wait and follows the blockers to the leaf', async () => {
    const answer = await data<{
      workflow: {
        explanation: string;
        childCounts: Record<string, unknown>[];
        blockers: { step: string; code: string; facts: Record<string, unknown> }[];
        result: unknown;
      };
    }>(
      api.url,
      `query ($id: ID!) {
        workflow(id: $id) {
          explanation result
          childCounts {
            step task { step } workflows total succeeded failed unfinished allowedFailures detached
            byState { state count }
          }
          blockers { step code facts }
        }
      }`,
      { variables: { id: mids[0] } },
    );
    const { workflow } = answer;
    expect(workflow.childCounts).toEqual([
      {
        step: 'fan',
        task: { step: 'fan' },
        workflows: ['tree-leaf'],
        total: 3,
        succeeded: 0,
        failed: 1,
        unfinished: 2,
        allowedFailures: 2,
        detached: 0,
        byState: [
          { state: 'QUEUED', count: 0 },
          { state: 'RUNNING', count: 0 },
          { state: 'WAITING', count: 2 },
          { state: 'CANCEL_REQUESTED', count: 0 },
          { state: 'SUCCEEDED', count: 0 },
          { state: 'CANCELLED', count: 0 },
          { state: 'DEAD', count: 1 },
        ],
      },
    ]);
    expect(workflow.explanation).toContain(
      'fan: awaiting 3 child workflows of tree-leaf: 2 waiting, 1 dead (tolerated 1 of 2)',
    );
    expect(workflow.result).toBeNull();
    const [fan] = workflow.blockers;
    expect(fan?.code).toBe('CHILDREN_PENDING');
    const oldest = fan?.facts.oldest as { workflowId: string; blocker: { code: string } };
    // Facts keep the domain's codes (docs/blockers.md).
    expect([oldest.workflowId, oldest.blocker.code]).toEqual([leaves[1], 'waiting_for_event']);
  });

  it('lists workflows by parent and by root, with their states and counts', async () => {
    const list = async (variables: Record<string, unknown>) =>
      (
        await data<{ workflows: Connection }>(
          api.url,
          `query ($parentId: ID, $rootId: ID, $state: [WorkflowState!]) {
            workflows(parentId: $parentId, rootId: $rootId, state: $state, first: 50) {
              totalCount edges { cursor node { id } } pageInfo { hasNextPage endCursor }
            }
          }`,
          { variables },
        )
      ).workflows;
    const byParent = await list({ parentId: mids[0] });
    expect([byParent.edges.map((edge) => edge.node.id).sort(), byParent.totalCount]).toEqual([
      [...leaves].sort(),
      3,
    ]);
    const byRoot = await list({ rootId: root });
    expect(byRoot.totalCount).toBe(6);
    expect((await list({ rootId: root, state: ['DEAD'] })).edges.map((e) => e.node.id)).toEqual([
      leaves[0],
    ]);
    expect((await list({ parentId: leaves[0] })).totalCount).toBe(0);
  });

  it('refuses bad arguments with BAD_USER_INPUT and changes nothing', async () => {
    const workflowsCursor = (
      await data<{ workflows: Connection }>(
        api.url,
        '{ workflows(first: 1) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } totalCount totalCountCapped } }',
      )
    ).workflows.pageInfo.endCursor;
    const refusals: [string, Record<string, unknown>][] = [
      [childrenPage, { id: mids[0], first: 101 }],
      [childrenPage, { id: mids[0], first: -1 }],
      [childrenPage, { id: mids[0], after: workflowsCursor }],
      [childrenPage, { id: mids[0], after: 'not a cursor' }],
      [childrenPage, { id: mids[0], step: 'a\u0000b' }],
      [childrenPage, { id: mids[0], step: 'x'.repeat(201) }],
      ['query ($id: ID) { workflows(parentId: $id) { totalCount } }', { id: 'not-a-uuid' }],
      ['query ($id: ID) { workflows(rootId: $id) { totalCount } }', { id: '42' }],
    ];
    const before = await query(
      database().url,
      'select count(*)::int as n from causeway_transitions',
    );
    for (const [document, variables] of refusals) {
      const response = await gql(api.url, document, { variables });
      expect({ variables, codes: response.body.errors?.map((e) => e.extensions?.code) }).toEqual({
        variables,
        codes: ['BAD_USER_INPUT'],
      });
    }
    const childCursor = (await children({ id: mids[0], first: 1 })).pageInfo.endCursor;
    const wrongWay = await gql(
      api.url,
      'query ($after: String) { workflows(after: $after) { totalCount } }',
      { variables: { after: childCursor } },
    );
    expect(wrongWay.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(
      await query(database().url, 'select count(*)::int as n from causeway_transitions'),
    ).toEqual(before);
  });

  it('costs a connection of children like the list it is', async () => {
    // Ten workflows with a hundred children each, every child with its tasks' log: 1,000
    // children of about 120 fields. Costed as the ten pages of the outer list, it would pass.
    const nested = `{ workflows(first: 10) { edges { node { children(first: 100) {
      edges { node { id tasks { id transitions { id } } } } } } } } }`;
    const refused = await gql(api.url, nested);
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({
      code: 'QUERY_TOO_COMPLEX',
      limit: 'cost',
      max: defaultQueryLimits.maxCost,
    });
    // A page of children with their tasks, or of counts, is well within it.
    const page = await gql(
      api.url,
      `query ($id: ID!) { workflow(id: $id) { childCounts { step byState { state count } }
        children(first: 100) { totalCount edges { node { id tasks { id step } } } } } }`,
      { variables: { id: root } },
    );
    expect(page.body.errors).toBeUndefined();
  });

  it('gives the result once the tree has succeeded', async () => {
    for (const n of [1, 2, 3]) await api.engine.sendEvent('tree.release', String(n), { n });
    const done = await waitFor(
      async () => {
        const answer = await data<{ workflow: { state: string; result: unknown } }>(
          api.url,
          'query ($id: ID!) { workflow(id: $id) { state result } }',
          { variables: { id: root } },
        );
        return answer.workflow.state === 'SUCCEEDED' ? answer.workflow : undefined;
      },
      { timeoutMs: 15_000, description: 'the root succeeded' },
    );
    expect(done.result).toBe('2 groups');
    const leaf = await data<{ workflow: { result: unknown; explanation: string } }>(
      api.url,
      'query ($id: ID!) { workflow(id: $id) { result explanation } }',
      { variables: { id: leaves[2] } },
    );
    expect(leaf.workflow.result).toEqual({ n: 2 });
  });
});
