import {
  definitionAt,
  type WorkflowDefinition,
  type WorkflowState,
  workflowResultOf,
} from '@causeway/workflow/internal';
import type { Kysely } from 'kysely';
import { childCountList, type StepChildCounts } from '../../db/reads/child-counts';
import {
  type ChildFilter,
  type ChildKey,
  type ChildPageRow,
  childCountRead,
  childPageRead,
} from '../../db/reads/child-page';
import type { TaskRecord, WorkflowRecord } from '../../db/rows';
import type { CausewayDatabase } from '../../db/schema';
import { assertUuid } from '../operations/operations';

export type { StepChildCounts } from '../../db/reads/child-counts';
export type { ChildKey, ChildPageRow } from '../../db/reads/child-page';

/** Which children of a workflow: of one step, in any of some states; absent means any. */
export interface ChildWorkflowFilter extends ChildFilter {
  readonly states?: readonly WorkflowState[];
}

/** A page of child workflows, each with its keyset position to build cursors from. */
export interface ChildWorkflowPage {
  readonly rows: readonly ChildPageRow[];
  readonly hasMore: boolean;
}

/** The tree's reads (R48): a workflow's children, a page at a time, and its steps' counts. */
export interface TreeReads {
  /**
   * The children of `parentId` in (step, index) order after `after`, at most `limit`; children
   * a replay replaced are left out (their replacements are listed).
   */
  childPage(
    parentId: string,
    filter: ChildWorkflowFilter,
    page: { readonly after?: ChildKey | null; readonly limit: number },
  ): Promise<ChildWorkflowPage>;
  /** How many children match, counting no further than `atMost` (exact below it). */
  childCount(parentId: string, filter: ChildWorkflowFilter, atMost: number): Promise<number>;
  /** Each workflow's steps that started children, with their counts by state, by step name. */
  childCountsByWorkflowIds(
    ids: readonly string[],
  ): Promise<ReadonlyMap<string, readonly StepChildCounts[]>>;
}

export function createTreeReads(db: Kysely<CausewayDatabase>): TreeReads {
  return {
    childPage: (parentId, filter, page) =>
      childPageRead(db, {
        parentId,
        filter,
        after: page.after ?? null,
        limit: positive('limit', page.limit),
      }),
    childCount: (parentId, filter, atMost) =>
      childCountRead(db, parentId, filter, positive('atMost', atMost)),
    async childCountsByWorkflowIds(ids) {
      const groups = new Map<string, StepChildCounts[]>();
      for (const counts of await childCountList(db, ids)) {
        const group = groups.get(counts.workflowId);
        if (group === undefined) groups.set(counts.workflowId, [counts]);
        else group.push(counts);
      }
      return groups;
    },
  };
}

/**
 * A workflow's result (R45): the output of its only sink step, or an object of its sink steps'
 * outputs; null unless it succeeded, and null when this process does not define it (the sink
 * steps are the definition's).
 */
export function workflowResult(
  workflow: Pick<WorkflowRecord, 'name' | 'state'> & { readonly version?: string | null },
  tasks: readonly Pick<TaskRecord, 'step' | 'output'>[],
  definitions: ReadonlyMap<string, WorkflowDefinition>,
): unknown {
  const definition = definitionAt(definitions, workflow.name, workflow.version ?? null);
  if (workflow.state !== 'succeeded' || definition === undefined) return null;
  const outputs = new Map(tasks.map((task) => [task.step, task.output]));
  return workflowResultOf(definition, (step) => outputs.get(step) ?? null);
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  return value;
}

/** What `engine.children` takes: a filter, and a page's position and size (default 100). */
export interface ChildrenRequest extends ChildWorkflowFilter {
  readonly after?: ChildKey | null;
  readonly limit?: number;
}

/** `engine.children`: a page of a workflow's children (100 unless `limit` says otherwise). */
export function readChildren(
  db: Kysely<CausewayDatabase>,
  workflowId: string,
  { after, limit, ...filter }: ChildrenRequest = {},
): Promise<ChildWorkflowPage> {
  assertUuid(workflowId, 'workflow');
  return createTreeReads(db).childPage(workflowId, filter, { after, limit: limit ?? 100 });
}
