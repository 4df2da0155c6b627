import type { WorkflowAttributes } from '@causeway/workflow/internal';
import { type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import type { CausewayDatabase, WorkflowTable } from '../schema';
import { rareWorkflowStates } from './rare-states';
import { onlyUuids } from './read-queries';

/**
 * The workflow list filtered by attributes (R55), in the workflows' (created_at, id) order:
 * one join of causeway_workflow_attributes per attribute asked (all must match), on the
 * primary key (term, created_at, workflow_id), then the workflow by id. The planner starts
 * from the term it expects fewest rows of: a common one is walked in key order from the
 * page's position and stops after the page (its workflow's created_at and id are the
 * attribute row's), a rare one is read whole and sorted. The other filters (states, name,
 * parent, root) are checked on the workflows the terms find; a filter of rare states only may
 * instead start from those states' partial index, each workflow's terms looked up by key.
 */
type ReadDb = Kysely<CausewayDatabase>;

export type AttributePageRow = Selectable<WorkflowTable> & { readonly created_key: string };

/** The workflow list's filters (`WorkflowFilterRow`) with at least one attribute. */
export interface AttributeFilterRow {
  readonly attributes: WorkflowAttributes;
  readonly states?: readonly string[];
  readonly name?: string;
  readonly parentId?: string;
  readonly rootId?: string;
}

/** One page's question (`WorkflowPageAsk`) with attributes. */
export interface AttributePageAsk {
  readonly filter: AttributeFilterRow;
  readonly order: 'newest_first' | 'oldest_first';
  readonly after: { readonly createdAt: string; readonly id: string } | null;
  readonly limit: number;
}

/** The statement of a page (or of the rows a count counts, up to `limit`), or null for none. */
export function attributePageQuery(
  ask: AttributePageAsk,
  shape: 'page' | 'count' = 'page',
): RawBuilder<AttributePageRow> | null {
  const { filter } = ask;
  const ids = [filter.parentId, filter.rootId].filter((id) => id !== undefined);
  if (onlyUuids(ids).length < ids.length) return null;
  const terms = Object.entries(filter.attributes).map(
    ([key, value]) => sql`causeway_attribute_term(${key}::text, ${JSON.stringify(value)}::jsonb)`,
  );
  const [first, ...others] = terms;
  if (first === undefined) return null;
  const joins = others.map(
    (term, index) => sql`
      join causeway_workflow_attributes as ${sql.ref(`a${index + 1}`)}
        on ${sql.ref(`a${index + 1}.term`)} = ${term}
       and ${sql.ref(`a${index + 1}.created_at`)} = a0.created_at
       and ${sql.ref(`a${index + 1}.workflow_id`)} = a0.workflow_id`,
  );
  const newest = ask.order === 'newest_first';
  const position =
    ask.after === null
      ? sql``
      : sql`and (a0.created_at, a0.workflow_id) ${newest ? sql`<` : sql`>`}
              (${ask.after.createdAt}::timestamptz, ${ask.after.id}::uuid)`;
  const direction = newest ? sql`desc` : sql`asc`;
  const tail =
    shape === 'page'
      ? sql`order by a0.created_at ${direction}, a0.workflow_id ${direction} limit ${ask.limit + 1}`
      : sql`limit ${ask.limit}`;
  const columns =
    shape === 'page'
      ? sql`w.*,
      to_char(w.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_key`
      : sql`1 as one`;
  const conditions = workflowConditions(filter);
  // A count with no condition on the workflow counts attribute rows alone: retention deletes a
  // workflow's attribute rows in the statement that deletes it, so each row has its workflow.
  const workflow =
    shape === 'page' || conditions.length > 0
      ? sql`join causeway_workflows as w on w.id = a0.workflow_id`
      : sql``;
  const where = conditions.length === 0 ? sql`` : sql`and ${sql.join(conditions, sql` and `)}`;
  return sql<AttributePageRow>`
    select ${columns}
      from causeway_workflow_attributes as a0 ${sql.join(joins, sql` `)} ${workflow}
     where a0.term = ${first} ${position} ${where}
     ${tail}`;
}

function workflowConditions(filter: AttributeFilterRow): RawBuilder<unknown>[] {
  const conditions: RawBuilder<unknown>[] = [];
  if (filter.states !== undefined) {
    const states = [...new Set(filter.states)];
    conditions.push(sql`w.state = any(${states}::text[])`);
    // Rare states only: the planner may start from their partial index (0021) instead, and
    // look each workflow's terms up by key, rather than walk a common term's every row.
    if (states.every((state) => (rareWorkflowStates as readonly string[]).includes(state))) {
      conditions.push(sql`w.rare_state = any(${states}::text[])`);
    }
  }
  if (filter.name !== undefined) conditions.push(sql`w.name = ${filter.name}`);
  if (filter.parentId !== undefined) {
    conditions.push(sql`w.parent_workflow_id = ${filter.parentId}::uuid`);
  }
  if (filter.rootId !== undefined) {
    conditions.push(sql`w.root_workflow_id = ${filter.rootId}::uuid`);
  }
  return conditions;
}

/** A page of `attributePageQuery`, `limit + 1` rows at most. */
export async function attributePageRows(
  db: ReadDb,
  ask: AttributePageAsk,
): Promise<readonly AttributePageRow[]> {
  const query = attributePageQuery(ask);
  return query === null ? [] : (await query.execute(db)).rows;
}

/** How many workflows match, counting no further than `atMost`. */
export async function attributeCountRead(
  db: ReadDb,
  filter: AttributeFilterRow,
  atMost: number,
): Promise<number> {
  const matching = attributePageQuery(
    { filter, order: 'newest_first', after: null, limit: atMost },
    'count',
  );
  if (matching === null) return 0;
  const { rows } = await sql<{
    count: string;
  }>`select count(*) as count from (${matching}) as matching`.execute(db);
  return Number(rows[0]?.count ?? 0);
}
