import type { WorkflowFilter, WorkflowOrder } from '@causeway/engine';
import type { ApiContext } from '../context';
import { decodeWorkflowCursor, encodeWorkflowCursor } from '../cursor';
import { ApiError } from '../errors';
import type { QueryWorkflowsArgs } from '../generated/schema-types';
import type { BoundedCount, Models } from '../models';

/**
 * `totalCount` counts no further than this: a count of every matching row would read the whole
 * history (a million finished workflows for `state: SUCCEEDED`), and nobody pages that far.
 */
export const totalCountCap = 10_000;

/** The `workflows` query: one page in the asked order, and its bounded count on demand. */
export async function workflowConnection(
  args: QueryWorkflowsArgs,
  context: ApiContext,
): Promise<Models['WorkflowConnection']> {
  const { maxPageSize, defaultPageSize } = context.services.limits;
  const first = args.first ?? defaultPageSize;
  if (!Number.isInteger(first) || first < 0 || first > maxPageSize) {
    throw new ApiError('BAD_USER_INPUT', `first must be from 0 to ${maxPageSize}, got ${first}`, {
      argument: 'first',
      max: maxPageSize,
    });
  }
  if (args.name !== null && args.name !== undefined && args.name.length > 200) {
    throw new ApiError('BAD_USER_INPUT', 'name is at most 200 characters', { argument: 'name' });
  }
  const order: WorkflowOrder = args.order ?? 'newest_first';
  const after =
    args.after === null || args.after === undefined
      ? null
      : decodeWorkflowCursor(args.after, order);
  const filter: WorkflowFilter = {
    ...(args.state === null || args.state === undefined ? {} : { states: args.state }),
    ...(args.name === null || args.name === undefined ? {} : { name: args.name }),
  };
  const page = await context.reads.workflowPage(filter, {
    after,
    order,
    limit: Math.max(first, 1),
  });
  const rows = page.rows.slice(0, first);
  for (const row of rows) context.loaders.workflow.prime(row.workflow.id, row.workflow);
  const edges = rows.map((row) => ({
    cursor: encodeWorkflowCursor(row.key, order),
    node: row.workflow,
  }));
  let counted: Promise<BoundedCount> | null = null;
  return {
    edges,
    pageInfo: {
      hasNextPage: first === 0 ? page.rows.length > 0 : page.hasMore,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    count: () => {
      counted ??= context.reads.workflowCount(filter, totalCountCap + 1).then((value) => ({
        value: Math.min(value, totalCountCap),
        capped: value > totalCountCap,
      }));
      return counted;
    },
  };
}
