import { describe, expect, it } from 'vitest';
import { publishNote } from '../../examples/publish-note/workflow';
import { useTestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import {
  aliceToken,
  gql,
  handshake,
  sseSubscribe,
  startApi,
  wsClient,
  wsSubscribe,
} from './helpers';

const database = useTestDatabase();

describe('subscriptions authenticate at connection time', () => {
  it('WebSocket: an invalid token is refused at connection_init (4403), before any operation', async () => {
    const api = await startApi(database().url, { engine: { workflows: [publishNote] } });
    expect(await handshake(api.wsUrl, { authorization: 'Bearer not-a-valid-token-0000' })).toEqual({
      ack: false,
      code: 4403,
      reason: 'Forbidden',
    });
    expect(
      await handshake(api.wsUrl, {}, { authorization: 'Bearer nope-nope-nope-nope' }),
    ).toMatchObject({ code: 4403 });
    expect(await handshake(api.wsUrl, { authorization: `Bearer ${aliceToken}` })).toEqual({
      ack: true,
    });
    // Reads are public by default: no token is a reader, not an operator.
    expect(await handshake(api.wsUrl, {})).toEqual({ ack: true });
  });

  it("WebSocket: the connection's operator is the mutation's actor; an anonymous connection cannot mutate", async () => {
    const url = database().url;
    const api = await startApi(url, { engine: { workflows: [publishNote] } });
    const { workflow } = await api.engine.submit('publish-note', { noteId: 'ws', version: 1 });
    const cancel = `mutation { cancelWorkflow(id: "${workflow.id}") { state } }`;
    const anonymous = wsSubscribe(wsClient(api.wsUrl), cancel);
    await anonymous.done;
    expect(anonymous.errors).toMatchObject([{ extensions: { code: 'UNAUTHENTICATED' } }]);
    expect(
      await query(
        url,
        `select 1 from causeway_transitions where reason = 'cancelled_before_start'`,
      ),
    ).toEqual([]);

    const operator = wsSubscribe<{ cancelWorkflow: { state: string } }>(
      wsClient(api.wsUrl, aliceToken),
      cancel,
    );
    await operator.done;
    expect(operator.errors).toEqual([]);
    expect(operator.items).toEqual([{ cancelWorkflow: { state: 'CANCELLED' } }]);
    const actors = await query<{ actor: string }>(
      url,
      `select distinct actor from causeway_transitions where reason = 'cancelled_before_start'`,
    );
    expect(actors).toEqual([{ actor: 'operator:alice' }]);
  });

  it('SSE: an invalid token is refused with 401 before the stream starts', async () => {
    const api = await startApi(database().url, { engine: { workflows: [publishNote] } });
    const refused = sseSubscribe(api.url, 'subscription { transitions { id } }', {
      token: 'not-a-valid-token-0000',
    });
    expect(await refused.status).toBe(401);
    await refused.done;
    expect(refused.errors).toMatchObject([{ extensions: { code: 'UNAUTHENTICATED' } }]);
  });

  it('with publicReads: false every operation needs a token, on every transport', async () => {
    const api = await startApi(database().url, {
      engine: { workflows: [publishNote] },
      api: { publicReads: false },
    });
    expect((await gql(api.url, '{ definitions { name } }')).status).toBe(401);
    expect((await gql(api.url, '{ definitions { name } }', { token: aliceToken })).status).toBe(
      200,
    );
    expect(await handshake(api.wsUrl, {})).toMatchObject({ ack: false, code: 4403 });
    const sse = sseSubscribe(api.url, 'subscription { transitions { id } }');
    expect(await sse.status).toBe(401);
  });

  it('subscription arguments and limits are checked before anything streams', async () => {
    const api = await startApi(database().url, { engine: { workflows: [publishNote] } });
    const client = wsClient(api.wsUrl);
    const cases = [
      [
        'subscription { transitions(workflowId: "00000000-0000-4000-8000-000000000000") { id } }',
        'NOT_FOUND',
      ],
      ['subscription { transitions(after: "12abc") { id } }', 'BAD_USER_INPUT'],
      [
        `subscription { transitions { ${Array.from({ length: 30 }, (_, n) => `a${n}: id`).join(' ')} } }`,
        'QUERY_TOO_COMPLEX',
      ],
      ['subscription { transitions { nope } }', 'GRAPHQL_VALIDATION_FAILED'],
      ['subscription { transitions { id ', 'GRAPHQL_PARSE_FAILED'],
    ] as const;
    for (const [document, code] of cases) {
      const stream = wsSubscribe(client, document);
      await stream.done;
      expect({
        document,
        codes: stream.errors.map(
          (error) => (error as { extensions?: { code?: string } }).extensions?.code,
        ),
      }).toEqual({
        document,
        codes: [code],
      });
    }
    const sse = sseSubscribe(api.url, 'subscription { transitions(after: "x") { id } }');
    await sse.done;
    expect(sse.errors).toMatchObject([{ extensions: { code: 'BAD_USER_INPUT' } }]);
    await waitFor(() => api.server.feed.subscriberCount === 0, {
      description: 'no subscriber left',
    });
  });
});
