import { describe, expect, it } from 'vitest';
import { publishNote } from '../../examples/publish-note/workflow';
import { useTestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { bulky, doomed } from './fixtures/workflows';
import { aliceToken, gql, startApi } from './helpers';

const database = useTestDatabase();

/** Everything the API could have changed, as one comparable value. */
async function fingerprint(url: string): Promise<string> {
  const [row] = await query<{ print: string }>(
    url,
    `select concat_ws('|',
       (select md5(coalesce(string_agg(w::text, ',' order by w.id), '')) from causeway_workflows w),
       (select md5(coalesce(string_agg(t::text, ',' order by t.id), '')) from causeway_tasks t),
       (select count(*) from causeway_transitions)) as print`,
  );
  return row?.print as string;
}

const nested = (depth: number) => {
  // workflow → tasks → workflow → tasks … (Task.workflow closes the cycle).
  let selection = 'id';
  for (let level = 0; level < depth; level += 1) {
    selection = level % 2 === 0 ? `workflow { ${selection} }` : `tasks { ${selection} }`;
  }
  return `query($id: ID!) { workflow(id: $id) { ${selection} } }`;
};

describe('the bad-input catalog: each answer has its documented code and changes nothing', () => {
  it('answers every case with its code, never with SQL or a stack, and leaves the database as it was', async () => {
    const url = database().url;
    const api = await startApi(url, { engine: { workflows: [publishNote, doomed, bulky] } });
    const { workflow } = await api.engine.submit('publish-note', { noteId: 'live', version: 1 });
    const liveTask = (await api.engine.getWorkflow(workflow.id))?.tasks[0]?.id as string;
    const unknownId = '00000000-0000-4000-8000-000000000000';
    const submit = (name: string, input: unknown, extra = '') => ({
      document: `mutation($input: JSON!) { submitWorkflow(name: "${name}", input: $input${extra}) { workflow { id } } }`,
      variables: { input },
      token: aliceToken,
    });

    type Case = {
      name: string;
      document: string;
      variables?: Record<string, unknown>;
      token?: string;
      code: string;
      status: number;
      reason?: string;
      message?: RegExp;
    };
    const cases: Case[] = [
      {
        name: 'unknown workflow name',
        ...submit('no-such-workflow', { noteId: 'a', version: 1 }),
        code: 'BAD_USER_INPUT',
        reason: 'unknown_workflow',
        status: 200,
      },
      {
        name: 'input failing the zod schema',
        ...submit('publish-note', { noteId: 'a', version: -1 }),
        code: 'BAD_USER_INPUT',
        reason: 'invalid_input',
        status: 200,
      },
      {
        name: 'input over the admission size limit (256 KiB)',
        ...submit('bulky', { items: Array.from({ length: 30 }, () => 'x'.repeat(10_000)) }),
        code: 'BAD_USER_INPUT',
        reason: 'input_too_large',
        message: /over the limit of 262144 bytes: .*payloadRef\(\{ uri, version \}\)/,
        status: 200,
      },
      {
        name: 'a NUL character Postgres cannot store',
        ...submit('publish-note', { noteId: 'a\u0000b', version: 1 }),
        code: 'BAD_USER_INPUT',
        reason: 'unstorable_string',
        status: 200,
      },
      {
        name: 'an empty idempotency key',
        ...submit('publish-note', { noteId: 'a', version: 1 }, ', idempotencyKey: ""'),
        code: 'BAD_USER_INPUT',
        reason: 'invalid_idempotency_key',
        status: 200,
      },
      {
        name: 'a cursor this API never gave out',
        document: '{ workflows(after: "bm90LWEtY3Vyc29y") { totalCount } }',
        code: 'BAD_USER_INPUT',
        status: 200,
      },
      {
        name: 'a page size of 10^6',
        document: '{ workflows(first: 1000000) { edges { cursor } } }',
        code: 'BAD_USER_INPUT',
        status: 200,
      },
      {
        name: 'a negative page size',
        document: 'query($n: Int) { workflows(first: $n) { totalCount } }',
        variables: { n: -1 },
        code: 'BAD_USER_INPUT',
        status: 200,
      },
      {
        name: 'an unknown enum value (literal)',
        document: '{ workflows(state: FINISHED) { totalCount } }',
        code: 'GRAPHQL_VALIDATION_FAILED',
        status: 400,
      },
      {
        name: 'an unknown enum value (variable)',
        document: 'query($s: [WorkflowState!]) { workflows(state: $s) { totalCount } }',
        variables: { s: ['FINISHED'] },
        code: 'BAD_USER_INPUT',
        status: 400,
      },
      {
        name: 'selections nested 50 deep',
        document: nested(50),
        variables: { id: workflow.id },
        code: 'QUERY_TOO_COMPLEX',
        status: 400,
      },
      {
        name: 'too many aliases',
        document: `{ ${Array.from({ length: 30 }, (_, n) => `a${n}: definitions { name }`).join(' ')} }`,
        code: 'QUERY_TOO_COMPLEX',
        status: 400,
      },
      {
        name: 'an estimated cost over the limit',
        document:
          '{ workflows(first: 100) { edges { node { transitions { id from to reason actor at detail } tasks { transitions { id reason } workflow { transitions { id from to reason actor at detail } } } } } } }',
        code: 'QUERY_TOO_COMPLEX',
        status: 400,
      },
      {
        name: 'more tokens than the limit',
        document: `{ definitions { ${'name '.repeat(4_000)} } }`,
        code: 'QUERY_TOO_COMPLEX',
        status: 400,
      },
      {
        name: 'a document that does not parse',
        document: '{ workflows { ',
        code: 'GRAPHQL_PARSE_FAILED',
        status: 400,
      },
      {
        name: 'replay of a task that is not dead',
        document: `mutation { replayTask(id: "${liveTask}", reason: "try") { result { state } } }`,
        token: aliceToken,
        code: 'CONFLICT',
        status: 200,
      },
      {
        name: 'cancel of an unknown workflow id',
        document: `mutation { cancelWorkflow(id: "${unknownId}") { state } }`,
        token: aliceToken,
        code: 'NOT_FOUND',
        status: 200,
      },
      {
        name: 'cancel of an id that is not a UUID',
        document: `mutation { cancelTask(id: "1; drop table causeway_tasks") { result { state } } }`,
        token: aliceToken,
        code: 'NOT_FOUND',
        status: 200,
      },
      {
        name: 'replay without a reason',
        document: `mutation { replayTask(id: "${liveTask}", reason: "  ") { result { state } } }`,
        token: aliceToken,
        code: 'BAD_USER_INPUT',
        status: 200,
      },
      {
        name: 'a requeue range that ends before it starts',
        document:
          'mutation { requeueDead(reasonCode: NON_RETRYABLE_ERROR, from: "2030-01-01T00:00:00Z", to: "2020-01-01T00:00:00Z", reason: "r") { results { taskId } } }',
        token: aliceToken,
        code: 'BAD_USER_INPUT',
        status: 200,
      },
      {
        name: 'a DateTime that is not ISO 8601',
        document:
          'mutation($from: DateTime!) { requeueDead(reasonCode: NON_RETRYABLE_ERROR, from: $from, to: "2020-01-01T00:00:00Z", reason: "r") { results { taskId } } }',
        variables: { from: 'yesterday' },
        token: aliceToken,
        code: 'BAD_USER_INPUT',
        status: 400,
      },
      {
        name: 'a REJECTED receipt without an error category',
        document: `mutation { recordReceipt(taskId: "${liveTask}", outcome: REJECTED) { result { state } } }`,
        token: aliceToken,
        code: 'BAD_USER_INPUT',
        status: 200,
      },
      {
        name: 'an oversized clientMutationId',
        document: `mutation { cancelTask(id: "${liveTask}", clientMutationId: "${'c'.repeat(500)}") { result { state } } }`,
        token: aliceToken,
        code: 'BAD_USER_INPUT',
        status: 200,
      },
    ];

    const before = await fingerprint(url);
    for (const item of cases) {
      const response = await gql(api.url, item.document, {
        ...(item.variables === undefined ? {} : { variables: item.variables }),
        ...(item.token === undefined ? {} : { token: item.token }),
      });
      const errors = response.body.errors ?? [];
      expect({
        case: item.name,
        status: response.status,
        codes: errors.map((error) => error.extensions?.code),
      }).toEqual({
        case: item.name,
        status: item.status,
        codes: [item.code],
      });
      if (item.reason !== undefined)
        expect(errors[0]?.extensions?.reason, item.name).toBe(item.reason);
      if (item.message !== undefined) expect(errors[0]?.message, item.name).toMatch(item.message);
      const text = JSON.stringify(response.body);
      expect(text, item.name).not.toMatch(
        /\bat .+\.(ts|js):\d+|stack|originalError|causeway_tasks\b.*where|syntax error at or near|SQLSTATE|Did you mean/i,
      );
      if (response.status === 200) expect(response.body.data ?? null, item.name).toBeNull();
    }
    expect(await fingerprint(url)).toEqual(before);
  });

  it('refuses a request body over the limit with 413 before reading it all', async () => {
    const url = database().url;
    const api = await startApi(url, {
      engine: { workflows: [publishNote] },
      api: { maxBodyBytes: 64 * 1024 },
    });
    const before = await fingerprint(url);
    const body = JSON.stringify({
      query:
        'mutation($input: JSON!) { submitWorkflow(name: "publish-note", input: $input) { deduplicated } }',
      variables: { input: { noteId: 'big', version: 1, body: 'x'.repeat(100_000) } },
    });
    const response = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${aliceToken}` },
      body,
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      errors: [
        {
          message: 'the request body is over 65536 bytes',
          extensions: { code: 'PAYLOAD_TOO_LARGE' },
        },
      ],
    });
    // A chunked body (no Content-Length) is counted as it arrives.
    const chunked = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${aliceToken}` },
      body: new Blob([body]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(await fingerprint(url)).toEqual(before);
  });

  it('a cancel of a dead task is no error: it answers the state and why nothing changed (R15)', async () => {
    const url = database().url;
    const api = await startApi(url, { engine: { workflows: [doomed] } });
    const { workflow } = await api.engine.submit('doomed', { label: 'x' });
    const worker = await api.engine.startWorker({ concurrency: 1 });
    await waitFor(async () => (await api.engine.getWorkflow(workflow.id))?.state === 'dead');
    await worker.stop();
    const taskId = (await api.engine.getWorkflow(workflow.id))?.tasks[0]?.id as string;
    const before = await fingerprint(url);
    const cancel = await gql(
      api.url,
      `mutation { cancelTask(id: "${taskId}") { result { state changed refusal } } }`,
      { token: aliceToken },
    );
    // A cancel of a terminal task is not an error (R15): it answers the state and why.
    expect(cancel.body.data).toEqual({
      cancelTask: { result: { state: 'DEAD', changed: false, refusal: 'terminal_state' } },
    });
    expect(await fingerprint(url)).toEqual(before);
  });
});
