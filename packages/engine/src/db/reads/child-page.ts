import { type Kysely, type Selectable, sql } from 'kysely';
import { type WorkflowRecord, workflowFromRow } from '../rows';
import type { CausewayDatabase, WorkflowTable } from '../schema';
import { onlyUuids } from './read-queries';

/**
 * A workflow's child workflows (R48), in (step, child_index, id) order: the parent's tasks by
 * the (workflow_id, step) index, and each task's children by the (parent_task_id, child_index)
 * index, so a page reads about `limit` children of the steps it reaches, however large the
 * history. Children a replay replaced (R47) are not listed: their replacements are.
 */
type ReadDb = Kysely<CausewayDatabase>;

/** Which children: of one step, in some states; absent means any. */
export interface ChildFilter {
  readonly step?: string;
  readonly states?: readonly string[];
}

/** A keyset position in a parent's (step, child_index, id) order. */
export interface ChildKey {
  readonly step: string;
  readonly index: number;
  readonly id: string;
}

/** One page's question: the parent, the filter, the position and the size. */
export interface ChildPageAsk {
  readonly parentId: string;
  readonly filter: ChildFilter;
  readonly after: ChildKey | null;
  readonly limit: number;
}

export interface ChildPageRow {
  readonly workflow: WorkflowRecord;
  readonly key: ChildKey;
}

function childrenOfTask(filter: ChildFilter, after: ChildKey | null, limit: number | null) {
  const states =
    filter.states === undefined ? sql`` : sql`and c.state = any(${[...filter.states]}::text[])`;
  const position =
    after === null
      ? sql``
      : // The first conjunct is the index's bound (a parameter of the lateral scan); the
        // second the exact keyset position within the cursor's step.
        sql`and c.child_index >= (case when t.step = ${after.step} then ${after.index}::int else -1 end)
            and (t.step <> ${after.step} or (c.child_index, c.id) > (${after.index}::int, ${after.id}::uuid))`;
  const bound = limit === null ? sql`` : sql`limit ${limit}`;
  return sql`
    select c.*, t.step as parent_step from causeway_workflows as c
    where c.parent_task_id = t.id and not c.replaced ${states} ${position}
    order by c.child_index, c.id ${bound}`;
}

function parentTasks(ask: { parentId: string; filter: ChildFilter; after: ChildKey | null }) {
  const step = ask.filter.step === undefined ? sql`` : sql`and t.step = ${ask.filter.step}`;
  const from = ask.after === null ? sql`` : sql`and t.step >= ${ask.after.step}`;
  return sql`t.workflow_id = ${ask.parentId}::uuid ${step} ${from}`;
}

/** The statement of `childPageRead` (exported for the plan tests). */
export function childPageQuery(ask: ChildPageAsk) {
  return sql<Selectable<WorkflowTable> & { parent_step: string }>`
    select c.* from causeway_tasks as t
    cross join lateral (${childrenOfTask(ask.filter, ask.after, ask.limit + 1)}) as c
    where ${parentTasks(ask)}
    order by t.step, c.child_index, c.id
    limit ${ask.limit + 1}`;
}

/** One page of a parent's children after `after`, and whether more follow. */
export async function childPageRead(
  db: ReadDb,
  ask: ChildPageAsk,
): Promise<{ rows: ChildPageRow[]; hasMore: boolean }> {
  if (onlyUuids([ask.parentId]).length === 0) return { rows: [], hasMore: false };
  const { rows } = await childPageQuery(ask).execute(db);
  return {
    rows: rows.slice(0, ask.limit).map((row) => {
      const workflow = workflowFromRow(row);
      return {
        workflow,
        key: { step: row.parent_step, index: workflow.parent?.index ?? 0, id: workflow.id },
      };
    }),
    hasMore: rows.length > ask.limit,
  };
}

/** How many children match, counting no further than `atMost`. */
export async function childCountRead(
  db: ReadDb,
  parentId: string,
  filter: ChildFilter,
  atMost: number,
): Promise<number> {
  if (onlyUuids([parentId]).length === 0) return 0;
  const { rows } = await sql<{ count: number }>`
    select count(*)::int as count from (
      select 1 from causeway_tasks as t
      cross join lateral (${childrenOfTask(filter, null, atMost)}) as c
      where ${parentTasks({ parentId, filter, after: null })}
      limit ${atMost}) as matching`.execute(db);
  return rows[0]?.count ?? 0;
}
