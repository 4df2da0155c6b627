import { event, workflow } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { countingReadModel } from './counting-read-model';
import { aliceToken, data, gql, startApi, type TestApi, wsClient, wsSubscribe } from './helpers';

const database = useTestDatabase();
const url = () => database().url;
const day = 24 * 3_600_000;

const review = workflow({ name: 'api-review', input: z.object({ noteId: z.string() }) })
  .step('render', { run: (ctx) => ({ html: `<p>${ctx.input.noteId}</p>` }) })
  .event('approval', {
    after: ['render'],
    name: 'note.approved',
    key: (ctx) => ctx.input.noteId,
    payload: z.object({ editor: z.string(), approved: z.boolean() }),
    timeoutMs: 3 * day,
  })
  .step('publish', { after: ['approval'], run: (ctx) => ({ by: ctx.results.approval.editor }) })
  .build();

/** One event step with a constant key: created `waiting`, one send completes every one. */
const ping = workflow({ name: 'api-ping', input: z.object({ n: z.number() }) })
  .add('wait', event({ name: 'ping.all', key: 'all', timeoutMs: day, onTimeout: { late: true } }))
  .build();

/** An event step whose key function throws: it ends dead at once, never waiting (R58). */
const keyless = workflow({ name: 'api-keyless', input: z.object({ id: z.string() }) })
  .add(
    'wait',
    event({
      name: 'ping.keyless',
      key: () => {
        throw new Error('no key today');
      },
      timeoutMs: 60_000,
    }),
  )
  .build();

const workflows = [review, ping, keyless];

const sendEvent = `mutation($name: String!, $key: String!, $payload: JSON!, $idem: String, $reason: String, $cmid: String) {
  sendEvent(name: $name, key: $key, payload: $payload, idempotencyKey: $idem, reason: $reason, clientMutationId: $cmid) {
    clientMutationId eventId receivedAt deduplicated
    tasks { id workflowId step state waitingFor { name } events { id name key payload sentBy reason receivedAt } }
  }
}`;
type Sent = {
  sendEvent: {
    clientMutationId: string | null;
    eventId: string;
    receivedAt: string;
    deduplicated: boolean;
    tasks: { id: string; step: string; state: string; events: { id: string }[] }[];
  };
};

const taskQuery = `query($id: ID!) { task(id: $id) {
  id state waitingFor { name key since timeoutAt }
  events { id name key payload sentBy reason receivedAt }
  transitions { from to reason actor detail }
} }`;
type TaskAnswer = {
  task: {
    id: string;
    state: string;
    waitingFor: { name: string; key: string | null; since: string; timeoutAt: string } | null;
    events: {
      id: string;
      name: string;
      key: string;
      payload: unknown;
      sentBy: string;
      reason: string | null;
    }[];
    transitions: { from: string | null; to: string; reason: string; actor: string }[];
  };
};

/** Row counts of every table a send may write. */
async function counts() {
  const [row] = await query(
    url(),
    `select (select count(*)::int from causeway_workflows) as workflows,
            (select count(*)::int from causeway_tasks) as tasks,
            (select count(*)::int from causeway_transitions) as transitions,
            (select count(*)::int from causeway_events) as events,
            (select count(*)::int from causeway_event_deliveries) as deliveries`,
  );
  return row;
}

async function stepTask(api: TestApi, workflowId: string, step: string) {
  const view = await api.engine.getWorkflow(workflowId);
  return view?.tasks.find((task) => task.step === step);
}

/** Submits a review and runs `render`, so `approval` waits (`pending → waiting`). */
async function waitingReview(
  api: TestApi,
  noteId: string,
): Promise<{ workflowId: string; taskId: string }> {
  const { workflow: run } = await api.engine.submit('api-review', { noteId });
  const worker = await api.engine.startWorker({ concurrency: 1 });
  await waitFor(async () => (await api.engine.getWorkflow(run.id))?.state === 'waiting', {
    description: `${noteId} waiting`,
  });
  await worker.stop();
  return { workflowId: run.id, taskId: (await stepTask(api, run.id, 'approval'))?.id as string };
}

/** The mutation as alice, or with another token, or (null) with none. */
const send = (
  api: TestApi,
  variables: Record<string, unknown>,
  token: string | null = aliceToken,
) => gql<Sent>(api.url, sendEvent, { variables, ...(token === null ? {} : { token }) });

describe('sendEvent over GraphQL', () => {
  it('completes a waiting task and answers it; waitingFor while waiting, null after; Task.events after', async () => {
    const api = await startApi(url(), { engine: { workflows } });
    const { workflowId, taskId } = await waitingReview(api, 'n1');

    const waiting = await data<TaskAnswer>(api.url, taskQuery, { variables: { id: taskId } });
    expect(waiting.task).toMatchObject({ state: 'WAITING', events: [] });
    const wait = waiting.task.waitingFor;
    expect(wait).toMatchObject({ name: 'note.approved', key: 'n1' });
    expect(Date.parse(wait?.timeoutAt ?? '') - Date.parse(wait?.since ?? '')).toBe(3 * day);
    expect(waiting.task.transitions.at(-1)).toMatchObject({
      from: 'PENDING',
      to: 'WAITING',
      reason: 'EVENT_AWAITED',
    });
    const parent = await data<{ workflow: { state: string; explanation: string } }>(
      api.url,
      'query($id: ID!) { workflow(id: $id) { state explanation } }',
      { variables: { id: workflowId } },
    );
    expect(parent.workflow.state).toBe('WAITING');
    expect(parent.workflow.explanation).toContain('waiting for note.approved (key n1)');

    const payload = { editor: 'ada', approved: true };
    const reason = 'read it: "ready" to publish';
    const response = await send(api, { name: 'note.approved', key: 'n1', payload, reason });
    expect(response.status).toBe(200);
    const answer = (response.body.data as Sent).sendEvent;
    expect(answer).toMatchObject({ clientMutationId: null, deduplicated: false });
    expect(answer.receivedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const received = {
      id: answer.eventId,
      name: 'note.approved',
      key: 'n1',
      payload,
      sentBy: 'operator:alice',
      reason,
      receivedAt: answer.receivedAt,
    };
    expect(answer.tasks).toEqual([
      {
        id: taskId,
        workflowId,
        step: 'approval',
        state: 'SUCCEEDED',
        waitingFor: null,
        events: [received],
      },
    ]);

    const after = await data<TaskAnswer>(api.url, taskQuery, { variables: { id: taskId } });
    expect(after.task).toMatchObject({ state: 'SUCCEEDED', waitingFor: null, events: [received] });
    expect(after.task.transitions.at(-1)).toEqual({
      from: 'WAITING',
      to: 'SUCCEEDED',
      reason: 'EVENT_RECEIVED',
      actor: 'operator:alice',
      detail: { eventId: answer.eventId, operatorReason: reason },
    });
    const explained = await data<{ workflow: { explanation: string } }>(
      api.url,
      'query($id: ID!) { workflow(id: $id) { explanation } }',
      { variables: { id: workflowId } },
    );
    expect(explained.workflow.explanation).toContain(
      `approval: event received by alice: "${reason}" (event ${answer.eventId})`,
    );
    // Downstream reads the payload; other tasks have no events.
    const worker = await api.engine.startWorker({ concurrency: 1 });
    await waitFor(async () => (await api.engine.getWorkflow(workflowId))?.state === 'succeeded');
    await worker.stop();
    expect((await stepTask(api, workflowId, 'publish'))?.output).toEqual({ by: 'ada' });
    const tasks = await data<{ workflow: { tasks: { step: string; events: { id: string }[] }[] } }>(
      api.url,
      'query($id: ID!) { workflow(id: $id) { tasks { step events { id } } } }',
      { variables: { id: workflowId } },
    );
    expect(tasks.workflow.tasks).toEqual([
      { step: 'render', events: [] },
      { step: 'approval', events: [{ id: answer.eventId }] },
      { step: 'publish', events: [] },
    ]);
    expect(await logMismatches(url())).toEqual([]);
  });

  it('needs an operator token (401 UNAUTHENTICATED) and writes nothing without one', async () => {
    const api = await startApi(url(), { engine: { workflows } });
    const { taskId } = await waitingReview(api, 'no-token');
    const before = await counts();
    for (const token of [null, 'not-a-known-token-at-all', `${aliceToken}x`]) {
      const response = await send(
        api,
        { name: 'note.approved', key: 'no-token', payload: { editor: 'x', approved: true } },
        token,
      );
      expect(response.status).toBe(401);
      expect(response.body.data ?? null).toBeNull();
      expect(response.body.errors?.map((error) => error.extensions?.code)).toEqual([
        'UNAUTHENTICATED',
      ]);
    }
    expect(await counts()).toEqual(before);
    expect(
      (await data<TaskAnswer>(api.url, taskQuery, { variables: { id: taskId } })).task.state,
    ).toBe('WAITING');
  });

  it('is idempotent by clientMutationId and by idempotencyKey: a repeat writes nothing', async () => {
    const api = await startApi(url(), { engine: { workflows } });
    const byMemo = await waitingReview(api, 'memo');
    const byKey = await waitingReview(api, 'idem');
    const verdict = { editor: 'bo', approved: false };

    const memo = { name: 'note.approved', key: 'memo', payload: verdict, cmid: 'click-1' };
    const first = await send(api, memo);
    expect(first.body.data?.sendEvent).toMatchObject({
      clientMutationId: 'click-1',
      deduplicated: false,
      tasks: [{ id: byMemo.taskId, state: 'SUCCEEDED' }],
    });
    const afterFirst = await counts();
    const repeat = await send(api, memo);
    expect(repeat.body).toEqual(first.body);
    expect(await counts()).toEqual(afterFirst);
    // The same clientMutationId for another request is a CONFLICT.
    const other = await send(api, { ...memo, payload: { editor: 'cy', approved: true } });
    expect(other.body.errors?.map((error) => error.extensions?.code)).toEqual(['CONFLICT']);
    expect(await counts()).toEqual(afterFirst);

    const keyed = { name: 'note.approved', key: 'idem', payload: verdict, idem: 'approval-idem-1' };
    const sent = (await send(api, keyed)).body.data?.sendEvent;
    expect(sent).toMatchObject({
      deduplicated: false,
      tasks: [{ id: byKey.taskId, state: 'SUCCEEDED' }],
    });
    const afterSent = await counts();
    expect(afterSent).toMatchObject({
      events: (afterFirst?.events as number) + 1,
      deliveries: (afterFirst?.deliveries as number) + 1,
    });
    // No clientMutationId: the engine's idempotency key answers the first send.
    const again = (await send(api, keyed)).body.data?.sendEvent;
    expect(again).toEqual({ ...sent, deduplicated: true });
    expect(await counts()).toEqual(afterSent);

    // A repeat with another reason answers the first send; the first's reason stays.
    const reasoned = { name: 'ping.all', key: 'all', payload: {}, idem: 'reasoned' };
    await send(api, { ...reasoned, reason: 'the first words' });
    const afterReasoned = await counts();
    const reworded = await send(api, { ...reasoned, reason: 'other words' });
    expect(reworded.body.data?.sendEvent).toMatchObject({ deduplicated: true });
    expect(await counts()).toEqual(afterReasoned);
    expect(
      await query(url(), "select reason from causeway_events where idempotency_key = 'reasoned'"),
    ).toEqual([{ reason: 'the first words' }]);

    // An event nobody waits for is stored and kept for later waiters.
    const early = (await send(api, { name: 'note.approved', key: 'later', payload: verdict })).body
      .data?.sendEvent;
    expect(early).toMatchObject({ deduplicated: false, tasks: [] });
    expect(await counts()).toMatchObject({
      events: (afterReasoned?.events as number) + 1,
      deliveries: afterReasoned?.deliveries,
    });
  });

  it('answers bad input with BAD_USER_INPUT and the engine code, writing nothing', async () => {
    const api = await startApi(url(), { engine: { workflows } });
    const { taskId } = await waitingReview(api, 'bad');
    await send(api, { name: 'ping.all', key: 'all', payload: {}, idem: 'taken' });
    const ok = { editor: 'a', approved: true };
    const cases: [string, Record<string, unknown>, string, string | undefined][] = [
      [
        'unknown name',
        { name: 'note.unknown', key: 'bad', payload: ok },
        'BAD_USER_INPUT',
        'unknown_event',
      ],
      [
        'empty key',
        { name: 'note.approved', key: '', payload: ok },
        'BAD_USER_INPUT',
        'invalid_event_key',
      ],
      [
        'long key',
        { name: 'note.approved', key: 'k'.repeat(257), payload: ok },
        'BAD_USER_INPUT',
        'invalid_event_key',
      ],
      [
        'schema refuses',
        { name: 'note.approved', key: 'bad', payload: { editor: 1 } },
        'BAD_USER_INPUT',
        'invalid_event_payload',
      ],
      [
        'too large',
        { name: 'ping.all', key: 'all', payload: { text: 'x'.repeat(300_000) } },
        'BAD_USER_INPUT',
        'payload_too_large',
      ],
      [
        'unstorable',
        { name: 'ping.all', key: 'all', payload: { text: 'nul \u0000' } },
        'BAD_USER_INPUT',
        'unstorable_string',
      ],
      [
        'empty idempotency key',
        { name: 'note.approved', key: 'bad', payload: ok, idem: '' },
        'BAD_USER_INPUT',
        'invalid_idempotency_key',
      ],
      [
        'idempotency key of another key',
        { name: 'ping.all', key: 'other', payload: {}, idem: 'taken' },
        'CONFLICT',
        'conflict',
      ],
      [
        'long reason',
        { name: 'note.approved', key: 'bad', payload: ok, reason: 'r'.repeat(1_001) },
        'BAD_USER_INPUT',
        undefined,
      ],
      [
        'unstorable reason',
        { name: 'note.approved', key: 'bad', payload: ok, reason: 'nul \u0000' },
        'BAD_USER_INPUT',
        'invalid_request',
      ],
      [
        'long clientMutationId',
        { name: 'note.approved', key: 'bad', payload: ok, cmid: 'c'.repeat(201) },
        'BAD_USER_INPUT',
        undefined,
      ],
    ];
    const before = await counts();
    for (const [label, variables, code, reason] of cases) {
      const response = await send(api, variables);
      const errors = response.body.errors ?? [];
      expect({
        label,
        status: response.status,
        codes: errors.map((e) => e.extensions?.code),
      }).toEqual({
        label,
        status: 200,
        codes: [code],
      });
      expect(errors[0]?.extensions?.reason, label).toBe(reason);
      expect(response.body.data ?? null, label).toBeNull();
      expect(JSON.stringify(response.body), label).not.toMatch(
        /\bat .+\.(ts|js):\d+|stack|SQLSTATE/i,
      );
    }
    // A null payload does not coerce: refused before anything runs.
    const nullPayload = await send(api, { name: 'note.approved', key: 'bad', payload: null });
    expect(nullPayload.status).toBe(400);
    expect(nullPayload.body.errors?.map((error) => error.extensions?.code)).toEqual([
      'BAD_USER_INPUT',
    ]);
    expect(await counts()).toEqual(before);
    expect(
      (await data<TaskAnswer>(api.url, taskQuery, { variables: { id: taskId } })).task.state,
    ).toBe('WAITING');
  });
});

describe('waits and event steps in queries', () => {
  it('shows a step whose key function failed as dead with the error (R58), and event steps in definitions', async () => {
    const api = await startApi(url(), { engine: { workflows } });
    const { workflow: run } = await api.engine.submit('api-keyless', { id: 'k1' });
    const taskId = (await stepTask(api, run.id, 'wait'))?.id as string;
    const answer = await data<TaskAnswer>(api.url, taskQuery, { variables: { id: taskId } });
    expect(answer.task.state).toBe('DEAD');
    expect(answer.task.waitingFor).toBeNull();
    expect(answer.task.transitions).toEqual([
      { from: null, to: 'PENDING', reason: 'SUBMITTED', actor: 'client', detail: null },
      {
        from: 'PENDING',
        to: 'DEAD',
        reason: 'STEP_INPUT_FAILED',
        actor: 'system',
        detail: { input: 'event_key', error: 'the key function threw: no key today' },
      },
    ]);

    const definitions = await data<{
      definitions: { name: string; steps: { name: string; event: unknown }[] }[];
    }>(
      api.url,
      '{ definitions { name steps { name event { name timeoutMs succeedsOnTimeout onTimeout } } } }',
    );
    const steps = (name: string) =>
      definitions.definitions.find((definition) => definition.name === name)?.steps;
    expect(steps('api-review')).toEqual([
      { name: 'render', event: null },
      {
        name: 'approval',
        event: {
          name: 'note.approved',
          timeoutMs: 3 * day,
          succeedsOnTimeout: false,
          onTimeout: null,
        },
      },
      { name: 'publish', event: null },
    ]);
    expect(steps('api-ping')).toEqual([
      {
        name: 'wait',
        event: {
          name: 'ping.all',
          timeoutMs: day,
          succeedsOnTimeout: true,
          onTimeout: { late: true },
        },
      },
    ]);
  });

  it('a page of tasks with their waits and events costs the same few queries for 10 or 100 (no N+1)', async () => {
    const { readModel, statements } = countingReadModel(url());
    const api = await startApi(url(), {
      engine: { workflows },
      api: { readModel },
    });
    await api.engine.submitMany(
      Array.from({ length: 80 }, (_, n) => ({ name: 'api-ping', input: { n } })),
    );
    // One send completes every waiting ping; twenty more wait (accepted after it, R37).
    const sent = await api.engine.sendEvent('ping.all', 'all', { n: 'all' });
    expect(sent.tasks).toHaveLength(80);
    await api.engine.submitMany(
      Array.from({ length: 20 }, (_, n) => ({ name: 'api-ping', input: { n } })),
    );
    const document = (
      first: number,
    ) => `{ workflows(name: "api-ping", first: ${first}) { edges { node {
      tasks { id state waitingFor { name key since timeoutAt } events { id name payload sentBy } }
    } } } }`;
    type Page = {
      workflows: {
        edges: { node: { tasks: { state: string; waitingFor: unknown; events: unknown[] }[] } }[];
      };
    };
    const statementsFor = async (first: number) => {
      statements.length = 0;
      const page = await data<Page>(api.url, document(first));
      expect(page.workflows.edges).toHaveLength(first);
      return [...statements];
    };
    const ten = await statementsFor(10);
    const hundred = await statementsFor(100);
    const page = await data<Page>(api.url, document(100));
    const tasks = page.workflows.edges.flatMap((edge) => edge.node.tasks);
    expect(
      tasks.filter((task) => task.state === 'SUCCEEDED' && task.events.length === 1),
    ).toHaveLength(80);
    expect(
      tasks.filter(
        (task) => task.state === 'WAITING' && task.events.length === 0 && task.waitingFor !== null,
      ),
    ).toHaveLength(20);
    // The page, the tasks of its workflows, the events of those tasks; waits are task columns.
    expect(hundred.filter((text) => text.includes('causeway_event_deliveries'))).toHaveLength(1);
    expect(ten).toHaveLength(hundred.length);
    expect(hundred).toHaveLength(3);
  });
});

describe('the transitions subscription', () => {
  it('sees EVENT_AWAITED and then EVENT_RECEIVED for the workflow task, live', async () => {
    const api = await startApi(url(), { engine: { workflows } });
    const { workflow: run } = await api.engine.submit('api-review', { noteId: 'live' });
    type Row = {
      transitions: {
        step: string | null;
        from: string | null;
        to: string;
        reason: string;
        actor: string;
      };
    };
    const stream = wsSubscribe<Row>(
      wsClient(api.wsUrl),
      `subscription($id: ID) { transitions(workflowId: $id, after: "0") { step from to reason actor } }`,
      { id: run.id },
    );
    // The submitted rows from the log: the subscription is open before anything else happens.
    await waitFor(() => stream.items.length >= 4, { description: 'the submitted rows' });
    const worker = await api.engine.startWorker({ concurrency: 1 });
    const rows = () => stream.items.map((item) => item.transitions);
    await waitFor(() => rows().some((row) => row.reason === 'EVENT_AWAITED'), {
      description: 'event_awaited on the stream',
    });
    await send(api, {
      name: 'note.approved',
      key: 'live',
      payload: { editor: 'ed', approved: true },
    });
    await waitFor(() => rows().some((row) => row.step === null && row.to === 'SUCCEEDED'), {
      timeoutMs: 10_000,
      description: 'the workflow succeeded on the stream',
    });
    await worker.stop();
    stream.stop();
    expect(stream.errors).toEqual([]);
    const approval = rows().filter((row) => row.step === 'approval');
    expect(approval).toEqual([
      { step: 'approval', from: null, to: 'PENDING', reason: 'SUBMITTED', actor: 'client' },
      {
        step: 'approval',
        from: 'PENDING',
        to: 'WAITING',
        reason: 'EVENT_AWAITED',
        actor: 'system',
      },
      {
        step: 'approval',
        from: 'WAITING',
        to: 'SUCCEEDED',
        reason: 'EVENT_RECEIVED',
        actor: 'operator:alice',
      },
    ]);
    expect(
      rows()
        .filter((row) => row.step === null)
        .map((row) => row.to),
    ).toContain('WAITING');
  });
});
