import type { WorkflowFilter, WorkflowOrder, WorkflowRecord } from '@causeway/engine';
import {
  attributesProblem,
  textStorageProblem,
  type WorkflowAttributes,
} from '@causeway/workflow/internal';
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
  const first = pageSizeOf(args.first, context);
  const name = textArgument('name', args.name);
  const parentId = idArgument('parentId', args.parentId);
  const rootId = idArgument('rootId', args.rootId);
  const attributes = attributesArgument(args.attributes);
  const order: WorkflowOrder = args.order ?? 'newest_first';
  const after =
    args.after === null || args.after === undefined
      ? null
      : decodeWorkflowCursor(args.after, order);
  const filter: WorkflowFilter = {
    ...(args.state === null || args.state === undefined ? {} : { states: args.state }),
    ...(name === null ? {} : { name }),
    ...(parentId === null ? {} : { parentId }),
    ...(rootId === null ? {} : { rootId }),
    ...(attributes === null ? {} : { attributes }),
  };
  const page = await context.reads.workflowPage(filter, {
    after,
    order,
    limit: Math.max(first, 1),
  });
  return connectionOf(
    page,
    first,
    (key) => encodeWorkflowCursor(key, order),
    (atMost) => context.reads.workflowCount(filter, atMost),
    context,
  );
}

/**
 * A page as a connection: its first `first` rows as edges (primed into the workflow loader),
 * and its count on demand, read once and no further than the cap.
 */
export function connectionOf<Key>(
  page: {
    readonly rows: readonly { readonly workflow: WorkflowRecord; readonly key: Key }[];
    readonly hasMore: boolean;
  },
  first: number,
  cursorOf: (key: Key) => string,
  countUpTo: (atMost: number) => Promise<number>,
  context: ApiContext,
): Models['WorkflowConnection'] {
  const rows = page.rows.slice(0, first);
  for (const row of rows) context.loaders.workflow.prime(row.workflow.id, row.workflow);
  const edges = rows.map((row) => ({ cursor: cursorOf(row.key), node: row.workflow }));
  let counted: Promise<BoundedCount> | null = null;
  return {
    edges,
    pageInfo: {
      hasNextPage: first === 0 ? page.rows.length > 0 : page.hasMore,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    count: () => {
      counted ??= countUpTo(totalCountCap + 1).then((value) => ({
        value: Math.min(value, totalCountCap),
        capped: value > totalCountCap,
      }));
      return counted;
    },
  };
}

/** A connection's `first`: the default when absent, from 0 to the largest page size. */
export function pageSizeOf(first: number | null | undefined, context: ApiContext): number {
  const { maxPageSize, defaultPageSize } = context.services.limits;
  const size = first ?? defaultPageSize;
  if (!Number.isInteger(size) || size < 0 || size > maxPageSize) {
    throw new ApiError('BAD_USER_INPUT', `first must be from 0 to ${maxPageSize}, got ${size}`, {
      argument: 'first',
      max: maxPageSize,
    });
  }
  return size;
}

/** A text filter argument: at most 200 characters of text Postgres can store; null when absent. */
export function textArgument(argument: string, value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const problem = value.length > 200 ? 'over 200 characters' : textStorageProblem(value);
  if (problem !== null) {
    throw new ApiError('BAD_USER_INPUT', `${argument} has ${problem}`, { argument });
  }
  return value;
}

/** An id filter argument: a workflow id (a UUID); null when absent. */
function idArgument(argument: string, value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (!uuidPattern.test(value)) {
    throw new ApiError('BAD_USER_INPUT', `${argument} is not a workflow id (a UUID)`, {
      argument,
    });
  }
  return value;
}

/**
 * The `attributes` filter (R55): an object a workflow's attributes could be (at most 16 keys,
 * values strings, numbers or booleans); null when absent or empty.
 */
function attributesArgument(value: unknown): WorkflowAttributes | null {
  if (value === null || value === undefined) return null;
  const problem = attributesProblem(value);
  if (problem !== null) {
    throw new ApiError('BAD_USER_INPUT', `attributes: ${problem}`, {
      argument: 'attributes',
      reason: 'invalid_attributes',
    });
  }
  return Object.keys(value as object).length === 0 ? null : (value as WorkflowAttributes);
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
