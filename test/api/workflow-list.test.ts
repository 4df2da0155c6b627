/**
 * The `workflows` query answers "what ran lately": newest first unless `order` says otherwise,
 * with cursors that belong to one order, and a `totalCount` that stops counting at 10,000.
 */
import { describe, expect, it } from 'vitest';
import { publishNote } from '../../examples/publish-note/workflow';
import { useTestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';
import { data, gql, startApi } from './helpers';

const database = useTestDatabase();

type Page = {
  workflows: {
    totalCount: number;
    totalCountCapped: boolean;
    edges: { cursor: string; node: { id: string } }[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
};
const pageQuery = `query($state: [WorkflowState!], $name: String, $first: Int, $after: String, $order: WorkflowOrder) {
  workflows(state: $state, name: $name, first: $first, after: $after, order: $order) {
    totalCount totalCountCapped edges { cursor node { id } } pageInfo { hasNextPage endCursor }
  }
}`;

describe('the workflows query', () => {
  it('lists newest first by default: a workflow submitted after 60 queued ones is on the first page', async () => {
    const api = await startApi(database().url, { engine: { workflows: [publishNote] } });
    await api.engine.submitMany(
      Array.from({ length: 60 }, (_, n) => ({
        name: 'publish-note',
        input: { noteId: `early-${n}`, version: 1 },
      })),
    );
    const { workflow: latest } = await api.engine.submit('publish-note', {
      noteId: 'latest',
      version: 1,
    });
    const page = async (order?: string) =>
      (
        await data<Page>(api.url, pageQuery, {
          variables: { state: ['QUEUED'], first: 50, ...(order === undefined ? {} : { order }) },
        })
      ).workflows;
    const newest = await page();
    expect(newest.edges[0]?.node.id).toBe(latest.id);
    expect(newest.totalCount).toBe(61);
    expect(newest.totalCountCapped).toBe(false);
    expect((await page('NEWEST_FIRST')).edges.map((edge) => edge.node.id)).toEqual(
      newest.edges.map((edge) => edge.node.id),
    );
    const oldest = await page('OLDEST_FIRST');
    expect(oldest.edges.map((edge) => edge.node.id)).not.toContain(latest.id);
    const all = async (order: string) =>
      (
        await data<Page>(api.url, pageQuery, { variables: { first: 100, order } })
      ).workflows.edges.map((edge) => edge.node.id);
    expect(await all('OLDEST_FIRST')).toEqual((await all('NEWEST_FIRST')).reverse());
  });

  it('refuses a cursor of one order in the other with BAD_USER_INPUT', async () => {
    const api = await startApi(database().url, { engine: { workflows: [publishNote] } });
    await api.engine.submitMany(
      Array.from({ length: 3 }, (_, n) => ({
        name: 'publish-note',
        input: { noteId: `cursor-${n}`, version: 1 },
      })),
    );
    for (const [from, to] of [
      ['NEWEST_FIRST', 'OLDEST_FIRST'],
      ['OLDEST_FIRST', 'NEWEST_FIRST'],
    ]) {
      const first = await data<Page>(api.url, pageQuery, { variables: { first: 1, order: from } });
      const cursor = first.workflows.pageInfo.endCursor;
      expect(cursor).not.toBeNull();
      const same = await data<Page>(api.url, pageQuery, {
        variables: { first: 1, order: from, after: cursor },
      });
      expect(same.workflows.edges).toHaveLength(1);
      const other = await gql<Page>(api.url, pageQuery, {
        variables: { first: 1, order: to, after: cursor },
      });
      expect(other.body.data ?? null).toBeNull();
      expect(other.body.errors?.[0]?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        argument: 'after',
      });
      expect(other.body.errors?.[0]?.message).toContain(`a cursor of the ${from} order`);
    }
    // A cursor given out before there was an order (`w1`) was oldest first, and still is.
    const [oldest] = await query<{ id: string; created: string }>(
      database().url,
      `select id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created
         from causeway_workflows order by created_at, id limit 1`,
    );
    const legacy = Buffer.from(JSON.stringify(['w1', oldest?.created, oldest?.id])).toString(
      'base64url',
    );
    const resumed = await data<Page>(api.url, pageQuery, {
      variables: { first: 100, order: 'OLDEST_FIRST', after: legacy },
    });
    expect(resumed.workflows.edges.map((edge) => edge.node.id)).not.toContain(oldest?.id);
    expect(resumed.workflows.edges.length).toBeGreaterThan(0);
    const refused = await gql<Page>(api.url, pageQuery, { variables: { after: legacy } });
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('counts up to 10,000 and says when more match', async () => {
    const api = await startApi(database().url, { engine: { workflows: [publishNote] } });
    await query(
      database().url,
      `insert into causeway_workflows (id, name, state, input, created_at, updated_at)
       select gen_random_uuid(), case when g <= 3 then 'few' else 'many' end, 'succeeded', '{}',
              now() - g * interval '1 second', now()
         from generate_series(1, 10005) g`,
    );
    const count = async (variables: Record<string, unknown>) => {
      const { totalCount, totalCountCapped } = (
        await data<Page>(api.url, pageQuery, { variables: { first: 1, ...variables } })
      ).workflows;
      return { totalCount, totalCountCapped };
    };
    expect(await count({ state: ['SUCCEEDED'] })).toEqual({
      totalCount: 10_000,
      totalCountCapped: true,
    });
    expect(await count({ name: 'many' })).toEqual({ totalCount: 10_000, totalCountCapped: true });
    expect(await count({ name: 'few' })).toEqual({ totalCount: 3, totalCountCapped: false });
    expect(await count({ state: ['DEAD'] })).toEqual({ totalCount: 0, totalCountCapped: false });
  });
});
