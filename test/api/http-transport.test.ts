import { describe, expect, it } from 'vitest';
import { publishNote } from '../../examples/publish-note/workflow';
import { useTestDatabase } from '../helpers/database';
import { aliceToken, gql, startApi } from './helpers';

const database = useTestDatabase();
const responseType = 'application/graphql-response+json; charset=utf-8';

describe('GraphQL over HTTP', () => {
  it('answers GET and POST with application/graphql-response+json and spec status codes', async () => {
    const api = await startApi(database().url, { engine: { workflows: [publishNote] } });
    const ok = '{ definitions { name } }';
    for (const method of ['GET', 'POST'] as const) {
      const response = await gql(api.url, ok, { method });
      expect(response.status).toBe(200);
      expect(response.contentType).toBe(responseType);
      expect(response.body).toEqual({ data: { definitions: [{ name: 'publish-note' }] } });
    }
    const legacy = await gql(api.url, ok, { accept: 'application/json' });
    expect(legacy.contentType).toBe('application/json; charset=utf-8');

    // Request errors (nothing executed): 4xx.
    expect((await gql(api.url, '{ definitions { name ')).status).toBe(400);
    expect((await gql(api.url, '{ nope }')).status).toBe(400);
    const viaGet = await gql(api.url, 'mutation { cancelTask(id: "x") { result { state } } }', {
      method: 'GET',
      token: aliceToken,
    });
    expect(viaGet.status).toBe(405);
    expect(viaGet.headers.get('allow')).toBe('POST');
    const noQuery = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ variables: {} }),
    });
    expect(noQuery.status).toBe(400);
    const notJson = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: '{"query": ',
    });
    expect(notJson.status).toBe(400);
    const unauthenticated = await gql(
      api.url,
      'mutation { cancelTask(id: "x") { result { state } } }',
    );
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('www-authenticate')).toBe('Bearer');

    // Field errors during execution: 200 with `data` and `errors`.
    const partial = await gql(api.url, 'mutation { cancelTask(id: "x") { result { state } } }', {
      token: aliceToken,
    });
    expect(partial.status).toBe(200);
    expect(partial.body.data).toBeNull();
    expect(partial.body.errors?.[0]).toMatchObject({
      path: ['cancelTask'],
      extensions: { code: 'NOT_FOUND' },
    });
    expect((await fetch(api.url.replace('/graphql', '/health'))).status).toBe(200);
  });

  it('production: no GraphiQL, no introspection, no field suggestions', async () => {
    const api = await startApi(database().url, { engine: { workflows: [publishNote] } });
    const page = await fetch(api.url, { headers: { accept: 'text/html' } });
    expect(await page.text()).not.toContain('GraphiQL');
    const introspection = await gql(api.url, '{ __schema { queryType { name } } }');
    expect(introspection.status).toBe(400);
    expect(introspection.body.errors?.[0]?.message).toContain('introspection has been disabled');
    const typo = await gql(api.url, '{ definition { name } }');
    expect(typo.body.errors?.[0]?.message).toBe('Cannot query field "definition" on type "Query".');
    const variable = await gql(
      api.url,
      'query($s: [WorkflowState!]) { workflows(state: $s) { totalCount } }',
      {
        variables: { s: ['DEA'] },
      },
    );
    expect(JSON.stringify(variable.body)).not.toContain('Did you mean');
    expect(variable.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    // __typename is not introspection.
    expect((await gql(api.url, '{ __typename }')).body).toEqual({ data: { __typename: 'Query' } });
  });

  it('development: GraphiQL, introspection and suggestions', async () => {
    const api = await startApi(database().url, {
      engine: { workflows: [publishNote] },
      api: { mode: 'development' },
    });
    const page = await fetch(api.url, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('GraphiQL');
    const introspection = await gql<{ __schema: { queryType: { name: string } } }>(
      api.url,
      '{ __schema { queryType { name } } }',
    );
    expect(introspection.body.data?.__schema.queryType.name).toBe('Query');
    const typo = await gql(api.url, '{ definition { name } }');
    expect(typo.body.errors?.[0]?.message).toContain('Did you mean "definitions"?');
    // Errors never carry stacks or internals, in development either.
    const failing = await gql(api.url, 'mutation { cancelTask(id: "x") { result { state } } }', {
      token: aliceToken,
    });
    expect(Object.keys(failing.body.errors?.[0]?.extensions ?? {}).sort()).toEqual([
      'code',
      'reason',
    ]);
  });
});
