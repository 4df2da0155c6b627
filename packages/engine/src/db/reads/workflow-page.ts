import {
  claimRule,
  isTerminalWorkflowState,
  nonTerminalTaskStates,
  type WorkflowAttributes,
  type WorkflowState,
} from '@causeway/workflow/internal';
import { type Kysely, type Selectable, sql } from 'kysely';
import { readyHalves } from '../claim/claim-order';
import { type WorkflowRecord, workflowFromRow } from '../rows';
import type { CausewayDatabase, WorkflowTable } from '../schema';
import { type AttributePageAsk, attributeCountRead, attributePageRows } from './attribute-page';
import { rareWorkflowStates } from './rare-states';
import { onlyUuids } from './read-queries';

/**
 * The workflow list: pages in (created_at, id) order, newest or oldest first, and a bounded
 * count, each one statement. However long the finished history, a page reads about `limit`
 * rows per state asked for:
 * - no state filter: the (created_at, id) index, in the page's direction, stops after the page;
 * - live states (queued, running, waiting): the workflows with a live task, found through the
 *   tasks' partial indexes (every workflow that is not terminal has a live task,
 *   docs/state-machine.md), then sorted: the live set, not the history;
 * - rare states (cancel_requested, cancelled, dead): the partial index on `rare_state`
 *   (migration 0021), one ordered range per state;
 * - succeeded, the common end: the (created_at, id) index, filtered; it stops after the page
 *   because most finished workflows succeeded;
 * - children of a parent, or the workflows below a root (R48): the (parent_workflow_id,
 *   created_at, id) or (root_workflow_id, created_at, id) index, states filtered there: it
 *   reads that tree, whatever the rest of the history.
 * The workflows table keeps no index on `state` itself so its updates stay HOT (0007, 0021).
 */
type ReadDb = Kysely<CausewayDatabase>;

export { rareWorkflowStates } from './rare-states';

/** Filters of a workflow listing; absent means "any". */
export interface WorkflowFilterRow {
  readonly states?: readonly string[];
  readonly name?: string;
  /** Children of this workflow (R48): through the (parent_workflow_id, created_at, id) index. */
  readonly parentId?: string;
  /** Descendants of this root: through the (root_workflow_id, created_at, id) index. */
  readonly rootId?: string;
  /** Every one of these attributes (R55): through causeway_workflow_attributes (attribute-page.ts). */
  readonly attributes?: WorkflowAttributes;
}

/** A keyset position in (created_at, id) order: created_at exact to the microsecond (UTC ISO). */
export interface WorkflowKey {
  readonly createdAt: string;
  readonly id: string;
}

/** Which end of the (created_at, id) order a list starts from. */
export type WorkflowOrder = 'newest_first' | 'oldest_first';

/** One page's question: its filter, order, position and size. */
export interface WorkflowPageAsk {
  readonly filter: WorkflowFilterRow;
  readonly order: WorkflowOrder;
  readonly after: WorkflowKey | null;
  readonly limit: number;
}

/**
 * The workflow row (`id`) has a live task: one arm per state's partial index; queued rows have
 * two, plain and keyed (R50). The cost follows the live tasks, not the finished history.
 */
export const withLiveTask = sql<boolean>`id = any(array(${sql.join(
  nonTerminalTaskStates.flatMap((state) =>
    (state === claimRule.from ? readyHalves : [sql`true`]).map(
      (half) =>
        sql`select workflow_id from causeway_tasks where state = ${sql.lit(state)} and ${half}`,
    ),
  ),
  sql` union all `,
)}))`;

const createdKey = sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** One access path of a filter: a predicate each index above answers on its own. */
type Arm = (query: ReturnType<typeof fromWorkflows>) => ReturnType<typeof fromWorkflows>;

function fromWorkflows(db: ReadDb, filter: WorkflowFilterRow) {
  let query = db.selectFrom('causeway_workflows');
  if (filter.name !== undefined) query = query.where('name', '=', filter.name);
  if (filter.parentId !== undefined) {
    query = query.where('parent_workflow_id', '=', filter.parentId);
  }
  if (filter.rootId !== undefined) query = query.where('root_workflow_id', '=', filter.rootId);
  return query;
}

/** The arms whose union is the filter's rows; none when the filter matches nothing. */
function armsOf(filter: WorkflowFilterRow): Arm[] {
  // Ids are UUIDs: a parent or root that is not one has no workflow below it.
  const ids = [filter.parentId, filter.rootId].filter((id) => id !== undefined);
  if (onlyUuids(ids).length < ids.length) return [];
  if (filter.states === undefined) return [(query) => query];
  const states = [...new Set(filter.states)] as WorkflowState[];
  // A tree's own index bounds the rows to that tree: its states are a filter on them.
  if (ids.length > 0) return [(query) => query.where('state', 'in', states)];
  const rare = states.filter((state) => rareWorkflowStates.includes(state));
  const live = states.filter((state) => !rare.includes(state) && !isTerminalWorkflowState(state));
  const common = states.filter((state) => !rare.includes(state) && !live.includes(state));
  const arms: Arm[] = rare.map((state) => (query) => query.where('rare_state', '=', state));
  if (live.length > 0) arms.push((query) => query.where('state', 'in', live).where(withLiveTask));
  if (common.length > 0) arms.push((query) => query.where('state', 'in', common));
  return arms;
}

function pageArm(db: ReadDb, ask: WorkflowPageAsk, arm: Arm) {
  const direction = ask.order === 'newest_first' ? 'desc' : 'asc';
  let query = arm(fromWorkflows(db, ask.filter)).selectAll().select(createdKey.as('created_key'));
  if (ask.after !== null) {
    const position = sql`(${ask.after.createdAt}::timestamptz, ${ask.after.id}::uuid)`;
    query = query.where(
      ask.order === 'newest_first'
        ? sql<boolean>`(created_at, id) < ${position}`
        : sql<boolean>`(created_at, id) > ${position}`,
    );
  }
  return query
    .orderBy('created_at', direction)
    .orderBy('id', direction)
    .limit(ask.limit + 1);
}

/**
 * The statement of `workflowPageRead` (exported for the tests that explain its plan), or null
 * when the filter matches nothing. With several arms, each reads its own `limit + 1` rows in
 * order and the union is ordered again: at most that many rows per arm are sorted.
 */
export function workflowPageQuery(db: ReadDb, ask: WorkflowPageAsk) {
  const [first, ...others] = armsOf(ask.filter).map((arm) => pageArm(db, ask, arm));
  if (first === undefined) return null;
  if (others.length === 0) return first;
  const direction = ask.order === 'newest_first' ? 'desc' : 'asc';
  let union = db.selectFrom(first.as('arm_0')).selectAll();
  others.forEach((arm, index) => {
    union = union.unionAll(db.selectFrom(arm.as(`arm_${index + 1}`)).selectAll());
  });
  return union
    .orderBy('created_at', direction)
    .orderBy('id', direction)
    .limit(ask.limit + 1);
}

/** The ask with its attributes when it filters by some (R55), else null. */
function attributeAsk(ask: WorkflowPageAsk): AttributePageAsk | null {
  const { attributes } = ask.filter;
  if (attributes === undefined || Object.keys(attributes).length === 0) return null;
  return { ...ask, filter: { ...ask.filter, attributes } };
}

/**
 * One page of workflows in (created_at, id) order after `after` (keyset pagination: a row
 * inserted meanwhile never shifts a page, so paging neither skips nor repeats existing rows).
 * Reads `limit + 1` rows to tell whether another page exists.
 */
export async function workflowPageRead(
  db: ReadDb,
  ask: WorkflowPageAsk,
): Promise<{ rows: { workflow: WorkflowRecord; key: WorkflowKey }[]; hasMore: boolean }> {
  const attributes = attributeAsk(ask);
  const query = attributes === null ? workflowPageQuery(db, ask) : null;
  const rows: readonly { readonly id: string; readonly created_key: string }[] =
    attributes !== null
      ? await attributePageRows(db, attributes)
      : query === null
        ? []
        : await query.execute();
  return {
    rows: rows.slice(0, ask.limit).map((row) => ({
      workflow: workflowFromRow(row as unknown as Selectable<WorkflowTable>),
      key: { createdAt: row.created_key, id: row.id },
    })),
    hasMore: rows.length > ask.limit,
  };
}

/** The statement of `workflowCountRead` (exported for the plan tests), or null for no arm. */
export function workflowCountQuery(db: ReadDb, filter: WorkflowFilterRow, atMost: number) {
  const [first, ...others] = armsOf(filter).map((arm) =>
    arm(fromWorkflows(db, filter)).select(sql.lit(1).as('one')),
  );
  if (first === undefined) return null;
  let union = first;
  for (const arm of others) union = union.unionAll(arm);
  return db
    .selectFrom(union.limit(atMost).as('matching'))
    .select((eb) => eb.fn.countAll<string>().as('count'));
}

/**
 * How many workflows match the filter, counting no further than `atMost`: the answer is
 * exact below it and `atMost` when at least that many match, so a count never walks the
 * whole history.
 */
export async function workflowCountRead(
  db: ReadDb,
  filter: WorkflowFilterRow,
  atMost: number,
): Promise<number> {
  if (filter.attributes !== undefined && Object.keys(filter.attributes).length > 0) {
    return attributeCountRead(db, { ...filter, attributes: filter.attributes }, atMost);
  }
  const query = workflowCountQuery(db, filter, atMost);
  if (query === null) return 0;
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.count);
}
