/**
 * R55 over GraphQL: `submitWorkflow(attributes:)` stores them (or refuses with BAD_USER_INPUT
 * and its reason, writing nothing), `Workflow.attributes` shows them, and
 * `workflows(attributes:)` keeps the workflows that have every attribute given, types
 * included, a page at a time with a bounded count.
 */
import { defineWorkflow, step } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';
import { aliceToken, data, gql, startApi } from './helpers';

const database = useTestDatabase();

const invoice = defineWorkflow({
  name: 'api-attr-invoice',
  input: z.object({ tenant: z.string() }),
  attributes: (input) => ({ tenant: input.tenant }),
  steps: { charge: step({ queue: 'q-api-attr', run: () => ({ charged: true }) }) },
});

type Page = {
  workflows: {
    totalCount: number;
    edges: { node: { id: string; attributes: Record<string, unknown> } }[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
};
const pageQuery = `query($attributes: JSON, $state: [WorkflowState!], $first: Int, $after: String) {
  workflows(attributes: $attributes, state: $state, first: $first, after: $after) {
    totalCount edges { node { id attributes } } pageInfo { hasNextPage endCursor }
  }
}`;
const submitMutation = `mutation($input: JSON!, $attributes: JSON) {
  submitWorkflow(name: "api-attr-invoice", input: $input, attributes: $attributes) {
    workflow { id attributes }
  }
}`;

const api = () => startApi(database().url, { engine: { workflows: [invoice] } });

const newest = (ids: readonly string[]) => [...ids].reverse();

/** Every page of a filter, in order, `first` at a time. */
async function allPages(url: string, attributes: unknown, first: number): Promise<string[]> {
  const ids: string[] = [];
  let after: string | null = null;
  for (;;) {
    const page: Page = await data<Page>(url, pageQuery, {
      variables: { attributes, first, after },
    });
    ids.push(...page.workflows.edges.map((edge) => edge.node.id));
    if (!page.workflows.pageInfo.hasNextPage) return ids;
    after = page.workflows.pageInfo.endCursor;
  }
}

describe('attributes over GraphQL', () => {
  it('submitWorkflow stores them merged with the definition’s; Workflow.attributes shows them', async () => {
    const { url } = await api();
    const submitted = await data<{
      submitWorkflow: { workflow: { id: string; attributes: Record<string, unknown> } };
    }>(url, submitMutation, {
      token: aliceToken,
      variables: { input: { tenant: 'acme' }, attributes: { tier: 5, vip: true } },
    });
    expect(submitted.submitWorkflow.workflow.attributes).toEqual({
      tenant: 'acme',
      tier: 5,
      vip: true,
    });
    const read = await data<{ workflow: { attributes: unknown } }>(
      url,
      'query($id: ID!) { workflow(id: $id) { attributes } }',
      { variables: { id: submitted.submitWorkflow.workflow.id } },
    );
    expect(read.workflow.attributes).toEqual({ tenant: 'acme', tier: 5, vip: true });
  });

  it('refuses bad attributes with BAD_USER_INPUT and the engine’s reason, writing nothing', async () => {
    const { url } = await api();
    const count = async () =>
      (
        await query<{ n: number }>(
          database().url,
          'select count(*)::int as n from causeway_workflows',
        )
      )[0]?.n;
    const before = await count();
    for (const [attributes, reason] of [
      [{ 'bad key': 1 }, 'invalid_attributes'],
      [{ tier: [1] }, 'invalid_attributes'],
      [{ tenant: 'globex' }, 'conflicting_attributes'],
    ] as const) {
      const response = await gql(url, submitMutation, {
        token: aliceToken,
        variables: { input: { tenant: 'acme' }, attributes },
      });
      expect(response.body.errors?.[0]?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        reason,
      });
    }
    expect(await count()).toBe(before);
  });

  it('workflows(attributes:) keeps those with every attribute, types included, page by page', async () => {
    const { url, engine } = await api();
    const numbered: string[] = [];
    const texted: string[] = [];
    const both: string[] = [];
    for (let n = 0; n < 5; n += 1) {
      const vip = n % 2 === 0;
      const { workflow } = await engine.submit(
        'api-attr-invoice',
        { tenant: 'initech' },
        { attributes: { tier: 5, ...(vip ? { vip: true } : {}) } },
      );
      numbered.push(workflow.id);
      if (vip) both.push(workflow.id);
    }
    for (let n = 0; n < 2; n += 1) {
      const { workflow } = await engine.submit(
        'api-attr-invoice',
        { tenant: 'initech' },
        { attributes: { tier: '5' } },
      );
      texted.push(workflow.id);
    }
    expect(await allPages(url, { tenant: 'initech', tier: 5 }, 2)).toEqual(newest(numbered));
    expect(await allPages(url, { tenant: 'initech', tier: '5' }, 2)).toEqual(newest(texted));
    expect(await allPages(url, { tenant: 'initech', tier: 5, vip: true }, 1)).toEqual(newest(both));
    expect(await allPages(url, { tier: 5, vip: false }, 5)).toEqual([]);
    const inline = await data<Page>(
      url,
      `{ workflows(attributes: { tenant: "initech", tier: 5 }, first: 2) {
          totalCount edges { node { id attributes } } pageInfo { hasNextPage endCursor } } }`,
    );
    expect(inline.workflows.totalCount).toBe(5);
    expect(inline.workflows.edges.map((edge) => edge.node.id)).toEqual(
      newest(numbered).slice(0, 2),
    );
    expect(inline.workflows.edges[0]?.node.attributes).toMatchObject({ tenant: 'initech' });
    const dead = await data<Page>(url, pageQuery, {
      variables: { attributes: { tier: '5' }, state: ['DEAD'] },
    });
    expect(dead.workflows.edges).toEqual([]);
    // An empty object filters nothing out.
    const any = await data<Page>(url, pageQuery, { variables: { attributes: {}, first: 1 } });
    expect(any.workflows.edges).toHaveLength(1);
  });

  it('refuses a filter no workflow could have with BAD_USER_INPUT', async () => {
    const { url } = await api();
    for (const attributes of [
      'tenant=acme',
      [{ tenant: 'acme' }],
      { tenant: null },
      { tenant: { nested: 1 } },
      { '9lives': 1 },
      Object.fromEntries(Array.from({ length: 17 }, (_, n) => [`k${n}`, n])),
    ]) {
      const response = await gql(url, pageQuery, { variables: { attributes } });
      expect(response.body.errors?.[0]?.extensions, JSON.stringify(attributes)).toMatchObject({
        code: 'BAD_USER_INPUT',
        argument: 'attributes',
        reason: 'invalid_attributes',
      });
    }
  });
});
