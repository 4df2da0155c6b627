/**
 * The cost limit charges a `totalCount` for the rows it counts (issue 28, item 7): even where
 * reads are public, one anonymous request cannot ask for many full counts, while a count
 * beside a full page (what a list view asks for) and the dashboard's own list still pass.
 */
import { describe, expect, it } from 'vitest';
import { publishNote } from '../../examples/publish-note/workflow';
import { workflowsQuery } from '../../packages/api/src/dashboard/workflows-page';
import { defaultQueryLimits } from '../../packages/api/src/limits';
import { useTestDatabase } from '../helpers/database';
import { gql, startApi } from './helpers';

const database = useTestDatabase();

function aliased(count: number, selection: string): string {
  return `{ ${Array.from({ length: count }, (_, n) => `c${n}: ${selection}`).join(' ')} }`;
}

describe('the cost of a count', () => {
  it('refuses twenty aliased totalCounts from an anonymous reader, before anything runs', async () => {
    const api = await startApi(database().url, { engine: { workflows: [publishNote] } });
    for (const document of [
      aliased(20, 'workflows(first: 0) { totalCount }'),
      aliased(20, 'workflows(first: 1) { totalCount }'),
      aliased(20, 'workflows(first: 0) { totalCountCapped }'),
      `${aliased(20, 'workflows(first: 0) { ...counted }')} fragment counted on WorkflowConnection { totalCount }`,
      aliased(10, 'workflows(first: 0) { totalCount }'),
    ]) {
      const response = await gql(api.url, document);
      expect({ document, status: response.status, errors: response.body.errors }).toMatchObject({
        document,
        status: 400,
        errors: [
          {
            extensions: {
              code: 'QUERY_TOO_COMPLEX',
              limit: 'cost',
              max: defaultQueryLimits.maxCost,
            },
          },
        ],
      });
      expect(response.body.data ?? null).toBeNull();
    }
  });

  it('lets a count beside a full page through, and the dashboard list', async () => {
    const api = await startApi(database().url, { engine: { workflows: [publishNote] } });
    await api.engine.submit('publish-note', { noteId: 'counted', version: 1 });
    const page = await gql<{ workflows: { totalCount: number } }>(
      api.url,
      '{ workflows(first: 100) { totalCount pageInfo { hasNextPage } edges { node { id state tasks { step state } } } } }',
    );
    expect(page.body.errors).toBeUndefined();
    expect(page.body.data?.workflows.totalCount).toBe(1);
    const twoCounts = await gql(
      api.url,
      '{ active: workflows(state: [RUNNING], first: 0) { totalCount } all: workflows(first: 0) { totalCount } }',
    );
    expect(twoCounts.body.errors).toBeUndefined();
    const dashboard = await gql(api.url, workflowsQuery, {
      variables: { first: defaultQueryLimits.maxPageSize },
    });
    expect(dashboard.body.errors).toBeUndefined();
  });
});
