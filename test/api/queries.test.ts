import { afterAll, describe, expect, it } from 'vitest';
import { publishNote } from '../../examples/publish-note/workflow';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';
import { countingReadModel } from './counting-read-model';
import { doomed } from './fixtures/workflows';
import { data, gql, startApi } from './helpers';

// Each test counts rows, so each gets a database of its own.
const databases: TestDatabase[] = [];
async function freshDatabase(): Promise<string> {
  const database = await createTestDatabase();
  databases.push(database);
  return database.url;
}
afterAll(async () => {
  await Promise.all(databases.map((database) => database.drop()));
});

type Page = {
  workflows: {
    totalCount: number;
    edges: { cursor: string; node: { id: string; name: string; createdAt: string } }[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
};

describe('queries', () => {
  it('a page of workflows with their tasks and transitions costs the same few queries for 10 or 100 (no N+1)', async () => {
    const url = await freshDatabase();
    const counting = countingReadModel(url);
    const api = await startApi(url, {
      engine: { workflows: [publishNote] },
      api: { readModel: counting.readModel },
    });
    await api.engine.submitMany(
      Array.from({ length: 100 }, (_, n) => ({
        name: 'publish-note',
        input: { noteId: `n-${n}`, version: 1 },
      })),
    );
    const document = (first: number) => `{
      workflows(first: ${first}) {
        totalCount
        edges { cursor node {
          id name state createdAt explanation
          transitions { id reason actor }
          tasks { id step state attempt workflow { id state } transitions { id from to reason } }
        } }
        pageInfo { hasNextPage endCursor }
      }
    }`;
    const statementsFor = async (first: number) => {
      counting.statements.length = 0;
      const result = await data<Page>(api.url, document(first));
      expect(result.workflows.edges).toHaveLength(first);
      return [...counting.statements];
    };
    const ten = await statementsFor(10);
    const hundred = await statementsFor(100);
    // Page, count, tasks of the page, transitions of the page, and the paused queues (the page
    // has queued tasks, which a pause would hold): one statement each.
    expect(hundred).toHaveLength(5);
    expect(ten).toHaveLength(hundred.length);

    const one = await data<{ workflows: { edges: { node: { tasks: { step: string }[] } }[] } }>(
      api.url,
      '{ workflows(first: 1) { edges { node { tasks { step } } } } }',
    );
    // Tasks come in the definition's step order.
    expect(one.workflows.edges[0]?.node.tasks.map((task) => task.step)).toEqual([
      'render',
      'review',
      'publish',
    ]);
  });

  for (const order of ['NEWEST_FIRST', 'OLDEST_FIRST'] as const) {
    it(`pages by opaque cursors in (createdAt, id) order, ${order}, stable while rows are inserted`, async () => {
      const url = await freshDatabase();
      const api = await startApi(url, { engine: { workflows: [publishNote, doomed] } });
      const submitBatch = (prefix: string, count: number) =>
        api.engine.submitMany(
          Array.from({ length: count }, (_, n) => ({
            name: 'publish-note',
            input: { noteId: `${prefix}-${n}`, version: 1 },
          })),
        );
      const existing = (await submitBatch('old', 12)).map((result) => result.workflow.id);
      for (let n = 0; n < 12; n += 1) await submitBatch(`single-${n}`, 1);
      const original = new Set([
        ...existing,
        ...(
          await data<Page>(api.url, '{ workflows(first: 100) { edges { node { id } } } }')
        ).workflows.edges.map((edge) => edge.node.id),
      ]);
      expect(original.size).toBe(24);

      const seen: Page['workflows']['edges'] = [];
      let after: string | null = null;
      let pages = 0;
      for (;;) {
        const page: Page = await data<Page>(
          api.url,
          'query($after: String, $order: WorkflowOrder) { workflows(first: 5, after: $after, order: $order) { totalCount edges { cursor node { id name createdAt } } pageInfo { hasNextPage endCursor } } }',
          { variables: { after, order } },
        );
        pages += 1;
        seen.push(...page.workflows.edges);
        // Concurrent inserts between pages: they land after every existing row (before the
        // first page, newest first), so no page shifts.
        await submitBatch(`during-${pages}`, 3);
        if (!page.workflows.pageInfo.hasNextPage) break;
        after = page.workflows.pageInfo.endCursor;
        expect(after).toBe(page.workflows.edges.at(-1)?.cursor);
        if (pages > 50) throw new Error('paging does not end');
      }
      const ids = seen.map((edge) => edge.node.id);
      expect(new Set(ids).size).toBe(ids.length);
      for (const id of original) expect(ids).toContain(id);
      // In (created_at, id) order, created_at to the microsecond as stored (the API's
      // createdAt shows milliseconds: two rows of one millisecond may be in either id order).
      const stored = await query<{ id: string; created_at: string }>(
        url,
        `select id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as created_at
         from causeway_workflows where id = any($1::uuid[])`,
        [ids],
      );
      const createdAt = new Map(stored.map((row) => [row.id, row.created_at]));
      const keys = ids.map((id) => `${createdAt.get(id)}|${id}`);
      const ordered = ids.every((id, index) => {
        const previous = ids[index - 1];
        if (previous === undefined) return true;
        const [before, at] = [createdAt.get(previous) ?? '', createdAt.get(id) ?? ''];
        return order === 'OLDEST_FIRST'
          ? before < at || (before === at && previous < id)
          : before > at || (before === at && previous > id);
      });
      // Newest first, the rows inserted while paging are before the first page: none is seen.
      if (order === 'NEWEST_FIRST') expect(ids.filter((id) => !original.has(id))).toEqual([]);
      expect(ordered, keys.join('\n')).toBe(true);
      for (const edge of seen) {
        // The API's createdAt is the stored time, to the millisecond.
        expect(edge.node.createdAt.slice(0, 23)).toBe(createdAt.get(edge.node.id)?.slice(0, 23));
      }
      // Cursors are opaque: not an id, not a number.
      expect(seen[0]?.cursor).not.toContain(seen[0]?.node.id);
    });
  }

  it('filters by state and name, with totalCount over all pages', async () => {
    const url = await freshDatabase();
    const api = await startApi(url, { engine: { workflows: [publishNote, doomed] } });
    const notes = await api.engine.submitMany(
      Array.from({ length: 6 }, (_, n) => ({
        name: 'publish-note',
        input: { noteId: `f-${n}`, version: 1 },
      })),
    );
    await api.engine.submit('doomed', { label: 'other' });
    for (const result of notes.slice(0, 2)) await api.engine.cancelWorkflow(result.workflow.id);
    const count = async (filter: string) =>
      (await data<Page>(api.url, `{ workflows(${filter}) { totalCount } }`)).workflows.totalCount;
    expect(await count('name: "publish-note"')).toBe(6);
    expect(await count('name: "doomed"')).toBe(1);
    expect(await count('state: CANCELLED')).toBe(2);
    expect(await count('state: [QUEUED, CANCELLED], name: "publish-note"')).toBe(6);
    expect(await count('state: QUEUED, name: "publish-note", first: 1')).toBe(4);
    expect(await count('state: []')).toBe(0);
    const page = await data<Page>(
      api.url,
      '{ workflows(state: CANCELLED, first: 1) { edges { node { id } } pageInfo { hasNextPage } } }',
    );
    expect(page.workflows.pageInfo.hasNextPage).toBe(true);
    const empty = await data<Page>(
      api.url,
      '{ workflows(first: 0) { edges { cursor } pageInfo { hasNextPage endCursor } } }',
    );
    expect(empty.workflows).toEqual({
      edges: [],
      pageInfo: { hasNextPage: true, endCursor: null },
    });
  });

  it('workflow, task and definitions: parent and child status, history and the narrative', async () => {
    const url = await freshDatabase();
    const api = await startApi(url, { engine: { workflows: [publishNote] } });
    const { workflow } = await api.engine.submit('publish-note', {
      noteId: 'read',
      version: 2,
      title: 'T',
    });
    const view = await api.engine.getWorkflow(workflow.id);
    const taskId = view?.tasks[0]?.id as string;
    // biome-ignore lint/suspicious/noExplicitAny: a wide GraphQL answer checked field by field.
    const result = await data<Record<string, any>>(
      api.url,
      `query($id: ID!, $task: ID!) {
        workflow(id: $id) { id name state input idempotencyKey explanation tasks { step state maxAttempts replayCount } }
        task(id: $task) { id step queue state attempt runAt workflow { id state } transitions { from to reason actor } }
        missing: workflow(id: "00000000-0000-4000-8000-000000000000") { id }
        malformed: task(id: "not-a-uuid") { id }
        definitions { name deadlineMs steps { name after queue retryPolicy { maxAttempts reentrant timeoutMs initialIntervalMs backoffCoefficient maximumIntervalMs } } edges { from to } }
      }`,
      { variables: { id: workflow.id, task: taskId } },
    );
    expect(result.workflow).toMatchObject({
      id: workflow.id,
      name: 'publish-note',
      state: 'QUEUED',
      input: { noteId: 'read', version: 2, title: 'T' },
      idempotencyKey: 'note:read:publish:v2',
      tasks: [
        { step: 'render', state: 'QUEUED', maxAttempts: 5, replayCount: 0 },
        { step: 'review', state: 'PENDING', maxAttempts: 3, replayCount: 0 },
        { step: 'publish', state: 'PENDING', maxAttempts: 4, replayCount: 0 },
      ],
    });
    expect(result.workflow.explanation).toContain('render: accepted and queued');
    expect(result.task).toMatchObject({
      id: taskId,
      step: 'render',
      queue: 'cpu',
      state: 'QUEUED',
      attempt: 0,
      workflow: { id: workflow.id, state: 'QUEUED' },
      transitions: [{ from: null, to: 'QUEUED', reason: 'SUBMITTED', actor: 'client' }],
    });
    expect(new Date(result.task.runAt).toISOString()).toBe(result.task.runAt);
    expect(result.missing).toBeNull();
    expect(result.malformed).toBeNull();
    expect(result.definitions).toEqual([
      {
        name: 'publish-note',
        deadlineMs: null,
        steps: [
          expect.objectContaining({ name: 'render', after: [], queue: 'cpu' }),
          expect.objectContaining({ name: 'review', after: ['render'], queue: 'default' }),
          {
            name: 'publish',
            after: ['review'],
            queue: 'network',
            retryPolicy: {
              maxAttempts: 4,
              reentrant: false,
              timeoutMs: 60_000,
              initialIntervalMs: 2_000,
              backoffCoefficient: 2,
              maximumIntervalMs: 60_000,
            },
          },
        ],
        edges: [
          { from: 'render', to: 'review' },
          { from: 'review', to: 'publish' },
        ],
      },
    ]);
    const gone = await gql(api.url, '{ workflow(id: "x") { id } }');
    expect(gone.body).toEqual({ data: { workflow: null } });
  });
});
