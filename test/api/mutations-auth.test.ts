import { describe, expect, it } from 'vitest';
import { publishNote } from '../../examples/publish-note/workflow';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { doomed, receipted } from './fixtures/workflows';
import { aliceToken, bobToken, data, gql, startApi, type TestApi } from './helpers';

const database = useTestDatabase();
const workflows = [publishNote, doomed, receipted];

/** Row counts of every table: "the database is unchanged" means these stay equal. */
async function counts(url: string) {
  const [row] = await query<{ workflows: string; tasks: string; transitions: string }>(
    url,
    `select (select count(*) from causeway_workflows) as workflows,
            (select count(*) from causeway_tasks) as tasks,
            (select count(*) from causeway_transitions) as transitions`,
  );
  return row;
}

async function taskOf(api: TestApi, workflowId: string): Promise<string> {
  const workflow = await api.engine.getWorkflow(workflowId);
  return workflow?.tasks[0]?.id as string;
}

/** Submits `doomed` workflows and lets an in-process worker kill them; returns their task ids. */
async function deadTasks(api: TestApi, labels: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const label of labels) {
    ids.push((await api.engine.submit('doomed', { label })).workflow.id);
  }
  const worker = await api.engine.startWorker({ concurrency: 2 });
  await waitFor(
    async () => {
      const states = await Promise.all(ids.map((id) => api.engine.getWorkflow(id)));
      return states.every((workflow) => workflow?.state === 'dead');
    },
    { description: 'doomed workflows dead' },
  );
  await worker.stop();
  return Promise.all(ids.map((id) => taskOf(api, id)));
}

const mutations = {
  submitWorkflow: `mutation { submitWorkflow(name: "publish-note", input: { noteId: "auth", version: 1 }) { deduplicated } }`,
  cancelWorkflow: (id: string) => `mutation { cancelWorkflow(id: "${id}") { state } }`,
  cancelTask: (id: string) => `mutation { cancelTask(id: "${id}") { result { state } } }`,
  replayTask: (id: string) =>
    `mutation { replayTask(id: "${id}", reason: "card fixed") { result { state } } }`,
  requeueDead: (from = '2000-01-01T00:00:00Z') => `mutation {
    requeueDead(reasonCode: NON_RETRYABLE_ERROR, from: "${from}", to: "2100-01-01T00:00:00Z", reason: "bulk fix") { results { taskId } }
  }`,
  recordReceipt: (id: string) =>
    `mutation { recordReceipt(taskId: "${id}", outcome: CONFIRMED) { result { state } } }`,
};

describe('operator identity: bearer token → operator name → transition actor', () => {
  it('refuses every mutation without a valid token (401 UNAUTHENTICATED) and writes nothing', async () => {
    const url = database().url;
    const api = await startApi(url, { engine: { workflows } });
    const { workflow } = await api.engine.submit('publish-note', { noteId: 'x', version: 1 });
    const taskId = await taskOf(api, workflow.id);
    const [deadTaskId] = await deadTasks(api, ['no-token']);
    const { workflow: waiting } = await api.engine.submit('receipted', { label: 'no-token' });
    const documents = [
      mutations.submitWorkflow,
      mutations.cancelWorkflow(workflow.id),
      mutations.cancelTask(taskId),
      mutations.replayTask(deadTaskId as string),
      mutations.requeueDead(),
      mutations.recordReceipt(await taskOf(api, waiting.id)),
    ];
    const before = await counts(url);
    for (const token of [undefined, 'not-a-known-token-at-all', `${aliceToken}x`]) {
      for (const document of documents) {
        const response = await gql(api.url, document, token === undefined ? {} : { token });
        expect(response.status, document).toBe(401);
        expect(response.body.data ?? null).toBeNull();
        expect(response.body.errors?.map((error) => error.extensions?.code)).toEqual([
          'UNAUTHENTICATED',
        ]);
      }
    }
    // The same over a WebSocket is refused at connection time (see subscriptions-security).
    expect(await counts(url)).toEqual(before);
  });

  it('records the operator named by the token as the actor of the edges it causes', async () => {
    const url = database().url;
    const api = await startApi(url, { engine: { workflows } });
    const transitionsOf = (id: string) =>
      query<{ reason: string; actor: string; detail: Record<string, unknown> | null }>(
        url,
        `select reason, actor, detail from causeway_transitions
          where workflow_id = $1 or task_id = $1 order by id`,
        [id],
      );

    const submitted = await data<{ submitWorkflow: { workflow: { id: string; state: string } } }>(
      api.url,
      `mutation { submitWorkflow(name: "publish-note", input: { noteId: "actor", version: 1 }) {
        workflow { id state } } }`,
      { token: aliceToken },
    );
    const workflowId = submitted.submitWorkflow.workflow.id;
    expect(submitted.submitWorkflow.workflow.state).toBe('QUEUED');
    // The edge table: the creation edge's actor is `client` (the operator only authorises it).
    expect((await transitionsOf(workflowId)).map((row) => row.actor)).toEqual([
      'client',
      'client',
      'client',
      'client',
    ]);

    await data(api.url, mutations.cancelWorkflow(workflowId), { token: aliceToken });
    const cancelEdges = (await transitionsOf(workflowId)).filter(
      (row) => row.reason === 'cancelled_before_start',
    );
    expect(cancelEdges.length).toBe(4); // three tasks and the workflow row
    expect(new Set(cancelEdges.map((row) => row.actor))).toEqual(new Set(['operator:alice']));

    const { workflow: other } = await api.engine.submit('publish-note', {
      noteId: 'b',
      version: 1,
    });
    const otherTask = await taskOf(api, other.id);
    await data(api.url, mutations.cancelTask(otherTask), { token: bobToken });
    expect((await transitionsOf(otherTask)).at(-1)).toMatchObject({
      reason: 'cancelled_before_start',
      actor: 'operator:bob',
    });

    // (Other tests of this file leave dead tasks too: requeue only what died from here on.)
    const [{ now }] = (await query<{ now: Date }>(url, 'select now() as now')) as [{ now: Date }];
    const [replayed, bulk] = await deadTasks(api, ['replay', 'bulk']);
    const replay = await data<{ replayTask: { result: Record<string, unknown> } }>(
      api.url,
      `mutation { replayTask(id: "${replayed}", reason: "card fixed") {
        result { taskId state changed reason task { state replayCount } } } }`,
      { token: aliceToken },
    );
    expect(replay.replayTask.result).toEqual({
      taskId: replayed,
      state: 'QUEUED',
      changed: true,
      reason: 'MANUAL_REPLAY',
      task: { state: 'QUEUED', replayCount: 1 },
    });
    expect((await transitionsOf(replayed as string)).at(-1)).toMatchObject({
      reason: 'manual_replay',
      actor: 'operator:alice',
      detail: { operatorReason: 'card fixed', replayCount: 1 },
    });

    const requeue = await data<{ requeueDead: { results: { taskId: string; state: string }[] } }>(
      api.url,
      mutations.requeueDead(now.toISOString()).replace('{ taskId }', '{ taskId state }'),
      { token: bobToken },
    );
    expect(requeue.requeueDead.results).toEqual([{ taskId: bulk, state: 'QUEUED' }]);
    expect((await transitionsOf(bulk as string)).at(-1)).toMatchObject({
      reason: 'bulk_requeue',
      actor: 'operator:bob',
      detail: { operatorReason: 'bulk fix' },
    });

    const { workflow: waiting } = await api.engine.submit('receipted', { label: 'receipt' });
    const worker = await api.engine.startWorker({ concurrency: 1 });
    const receiptTask = await taskOf(api, waiting.id);
    await waitFor(
      async () =>
        (await api.engine.getWorkflow(waiting.id))?.tasks[0]?.state === 'awaiting_receipt',
      { description: 'the receipt wait' },
    );
    await worker.stop();
    const receipt = await data<{ recordReceipt: { result: { state: string; changed: boolean } } }>(
      api.url,
      `mutation { recordReceipt(taskId: "${receiptTask}", outcome: CONFIRMED) { result { state changed } } }`,
      { token: aliceToken },
    );
    expect(receipt.recordReceipt.result).toEqual({ state: 'SUCCEEDED', changed: true });
    // The edge table: `awaiting_receipt → succeeded` is the receipt's edge.
    expect((await transitionsOf(receiptTask)).at(-1)).toMatchObject({
      reason: 'receipt_confirmed',
      actor: 'receipt',
    });
    expect(await logMismatches(url)).toEqual([]);
  });
});

describe('operator mutations are idempotent', () => {
  it('a double-clicked cancel (same clientMutationId, concurrently) writes one edge and answers the same', async () => {
    const url = database().url;
    const api = await startApi(url, { engine: { workflows } });
    const { workflow } = await api.engine.submit('publish-note', { noteId: 'dbl', version: 1 });
    const taskId = await taskOf(api, workflow.id);
    const document = `mutation { cancelTask(id: "${taskId}", clientMutationId: "click-1") {
      clientMutationId result { taskId state changed reason } } }`;
    const [first, second] = await Promise.all([
      data(api.url, document, { token: aliceToken }),
      data(api.url, document, { token: aliceToken }),
    ]);
    expect(first).toEqual(second);
    expect(first).toEqual({
      cancelTask: {
        clientMutationId: 'click-1',
        result: { taskId, state: 'CANCELLED', changed: true, reason: 'CANCELLED_BEFORE_START' },
      },
    });
    const edges = await query(
      url,
      'select 1 from causeway_transitions where task_id = $1 and reason = $2',
      [taskId, 'cancelled_before_start'],
    );
    expect(edges).toHaveLength(1);

    // Without a clientMutationId the engine's own idempotency answers the same state (R15).
    const again = await data<{ cancelTask: { result: Record<string, unknown> } }>(
      api.url,
      `mutation { cancelTask(id: "${taskId}") { result { state changed reason } } }`,
      { token: bobToken },
    );
    expect(again.cancelTask.result).toEqual({
      state: 'CANCELLED',
      changed: false,
      reason: 'CANCELLED_BEFORE_START',
    });

    // The same clientMutationId for another request is a conflict, and changes nothing.
    const before = await counts(url);
    const reused = await gql(
      api.url,
      `mutation { cancelWorkflow(id: "${workflow.id}", clientMutationId: "click-1") { state } }`,
      { token: aliceToken },
    );
    expect(reused.body.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(await counts(url)).toEqual(before);
  });

  it('a repeated replay writes one manual_replay edge and answers the same state', async () => {
    const url = database().url;
    const api = await startApi(url, { engine: { workflows } });
    const [taskId] = await deadTasks(api, ['twice']);
    const document = `mutation { replayTask(id: "${taskId}", reason: "fixed upstream") {
      result { taskId state reason } } }`;
    const first = await data(api.url, document, { token: aliceToken });
    const second = await data(api.url, document, { token: aliceToken });
    expect(second).toEqual(first);
    expect(first).toEqual({
      replayTask: { result: { taskId, state: 'QUEUED', reason: 'MANUAL_REPLAY' } },
    });
    const replays = await query(
      url,
      'select 1 from causeway_transitions where task_id = $1 and reason = $2',
      [taskId, 'manual_replay'],
    );
    expect(replays).toHaveLength(1);
    // Another operator (or another reason) asking to replay a task that is not dead: CONFLICT.
    const other = await gql(api.url, document, { token: bobToken });
    expect(other.body.errors?.[0]?.extensions?.code).toBe('CONFLICT');
  });
});
