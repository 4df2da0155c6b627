import { attributesOption } from '../attribute-option';
import type { CommandSpec, Invocation } from '../command';
import { usageError } from '../exit-codes';
import { code, enumValue, instant } from '../format';
import { graphqlRequest } from '../graphql-client';
import { table } from '../table';

/** `workflows`: what ran lately, newest first (GraphQL `Query.workflows`). */

const orders: Readonly<Record<string, string>> = {
  newest: 'NEWEST_FIRST',
  oldest: 'OLDEST_FIRST',
};

export interface WorkflowListPage {
  workflows: {
    totalCount: number;
    totalCountCapped: boolean;
    edges: {
      cursor: string;
      node: { id: string; name: string; state: string; createdAt: string; updatedAt: string };
    }[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
}

const listQuery = `query CausewayWorkflows($state: [WorkflowState!], $name: String, $parentId: ID, $rootId: ID, $attributes: JSON, $first: Int, $after: String, $order: WorkflowOrder) {
  workflows(state: $state, name: $name, parentId: $parentId, rootId: $rootId, attributes: $attributes, first: $first, after: $after, order: $order) {
    totalCount totalCountCapped
    edges { cursor node { id name state createdAt updatedAt } }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** `--state dead,cancel_requested` as the API's enum values; the server refuses unknown ones. */
function statesOption(invocation: Invocation): string[] | null {
  const value = invocation.option('state');
  return value === undefined ? null : value.split(',').map(enumValue);
}

function firstOption(invocation: Invocation): number | null {
  const value = invocation.option('first');
  if (value === undefined) return null;
  if (!/^\d+$/.test(value)) throw usageError(`--first must be a whole number, got ${value}`);
  return Number(value);
}

function orderOption(invocation: Invocation): string {
  const value = invocation.option('order') ?? 'newest';
  const order = orders[value];
  if (order === undefined) throw usageError(`--order must be newest or oldest, got ${value}`);
  return order;
}

function renderPage(page: WorkflowListPage['workflows'], invocation: Invocation): string {
  if (page.edges.length === 0) return 'no workflow matches';
  const { style } = invocation.output;
  const now = invocation.now();
  const rows = page.edges.map(({ node }) => [
    node.id,
    node.name,
    style.state(code(node.state)),
    instant(node.createdAt, now),
    instant(node.updatedAt, now),
  ]);
  const total = `${page.totalCount}${page.totalCountCapped ? '+' : ''}`;
  const next =
    page.pageInfo.hasNextPage && page.pageInfo.endCursor !== null
      ? `; next page: --after ${page.pageInfo.endCursor}`
      : '';
  return `${table(['WORKFLOW', 'NAME', 'STATE', 'CREATED', 'UPDATED'], rows)}\n\n${page.edges.length} of ${total}${next}`;
}

const workflows: CommandSpec = {
  name: 'workflows',
  summary:
    'what ran lately: workflows newest first, by state, name, attributes, parent or root, a page at a time',
  args: [],
  options: {
    state: {
      type: 'string',
      value: 'states',
      description: 'only these states, comma-separated (e.g. dead,cancel_requested)',
    },
    name: { type: 'string', value: 'name', description: 'only workflows of this name' },
    parent: {
      type: 'string',
      value: 'workflowId',
      description: 'only the child workflows of this workflow (any step)',
    },
    root: {
      type: 'string',
      value: 'workflowId',
      description: 'only the workflows below this root, at any depth',
    },
    attr: {
      type: 'string',
      value: 'key=value',
      multiple: true,
      description:
        'only workflows with this attribute (all given must match); the value is a boolean if true or false, a number if it is one (5), a string in double quotes ("5"), else the text as written',
    },
    first: { type: 'string', value: 'n', description: 'page size (the server default is 20)' },
    after: {
      type: 'string',
      value: 'cursor',
      description: 'the page after this cursor (printed under a page that has a next one)',
    },
    order: {
      type: 'string',
      value: 'newest|oldest',
      description: 'newest first (default) or oldest first',
    },
  },
  async run(invocation) {
    const data = await graphqlRequest<WorkflowListPage>(invocation.endpoint, listQuery, {
      state: statesOption(invocation),
      name: invocation.option('name') ?? null,
      parentId: invocation.option('parent') ?? null,
      rootId: invocation.option('root') ?? null,
      attributes: attributesOption(invocation),
      first: firstOption(invocation),
      after: invocation.option('after') ?? null,
      order: orderOption(invocation),
    });
    invocation.output.result(data, () => renderPage(data.workflows, invocation));
    return undefined;
  },
};

export const workflowListCommands: readonly CommandSpec[] = [workflows];
