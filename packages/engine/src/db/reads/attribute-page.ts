import type { WorkflowAttributes } from '@causeway/workflow/internal';
import { type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import type { CausewayDatabase, WorkflowTable } from '../schema';
import {
  pastPosition,
  rareStateWalk,
  sparsestTerm,
  termProbe,
  type WalkStart,
} from './attribute-driver';
import { rareWorkflowStates } from './rare-states';
import { onlyUuids } from './read-queries';

/**
 * The workflow list filtered by attributes (R55), in the workflows' (created_at, id) order:
 * one term's rows of causeway_workflow_attributes walked on the primary key (term,
 * created_at, workflow_id) from the page's position, stopping after the page (its workflow's
 * created_at and id are the attribute row's), then the workflow by id. With several
 * attributes (all must match) the sparsest term there is walked, each other one looked up by
 * key per row (attribute-driver.ts; a statement of its own chooses the term). The other
 * filters (states, name, parent, root) are checked on the workflows the terms find; a filter
 * of rare states only starts from those states' partial index instead when they are sparser
 * than every term, each workflow's terms looked up by key.
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

/** The terms a filter's attributes make, in the order given. */
export function attributeTerms(filter: AttributeFilterRow): RawBuilder<unknown>[] {
  return Object.entries(filter.attributes).map(
    ([key, value]) => sql`causeway_attribute_term(${key}::text, ${JSON.stringify(value)}::jsonb)`,
  );
}

/** Where the ask's page starts. */
export function walkStart(ask: AttributePageAsk): WalkStart {
  return { newest: ask.order === 'newest_first', after: ask.after };
}

/**
 * The statement of a page (or of the rows a count counts, up to `limit`) walking the term at
 * `walked` (`sparsestTerm` chooses it among several), or null for none.
 */
export function attributePageQuery(
  ask: AttributePageAsk,
  shape: 'page' | 'count' = 'page',
  walked = 0,
): RawBuilder<AttributePageRow> | null {
  const { filter } = ask;
  const ids = [filter.parentId, filter.rootId].filter((id) => id !== undefined);
  if (onlyUuids(ids).length < ids.length) return null;
  const terms = attributeTerms(filter);
  const driver = terms[walked];
  if (driver === undefined && walked !== rareStateWalk) return null;
  const start = walkStart(ask);
  const direction = start.newest ? sql`desc` : sql`asc`;
  const tail =
    shape === 'page'
      ? sql`order by a0.created_at ${direction}, a0.workflow_id ${direction} limit ${ask.limit + 1}`
      : sql`limit ${ask.limit}`;
  const columns =
    shape === 'page'
      ? sql`w.*,
      to_char(w.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_key`
      : sql`1 as one`;
  const onWorkflow = workflowConditions(filter);
  const rareStates = rareStatesOnly(filter);
  if (walked === rareStateWalk && rareStates !== null) {
    // From the rare states' partial index (0021), each state walked in the index's order and
    // stopping at the page, each term looked up by key per workflow; then the walks merged.
    const probes = terms.map((term) =>
      termProbe(term, { createdAt: sql`w.created_at`, id: sql`w.id` }),
    );
    const limit = shape === 'page' ? ask.limit + 1 : ask.limit;
    const order = sql`order by w.created_at ${direction}, w.id ${direction}`;
    const walks = rareStates.map(
      (state) => sql`(select ${columns}
      from causeway_workflows as w
     where w.rare_state = ${state} and ${sql.join([...onWorkflow, ...probes], sql` and `)}
       ${pastPosition('w', start, 'id')}
     ${shape === 'page' ? order : sql``} limit ${limit})`,
    );
    return sql<AttributePageRow>`
    select * from (${sql.join(walks, sql` union all `)}) as w
     ${shape === 'page' ? order : sql``} limit ${limit}`;
  }
  const conditions = [
    ...terms.filter((_, index) => index !== walked).map((term) => termProbe(term)),
    ...onWorkflow,
  ];
  // A count with no condition on the workflow counts attribute rows alone: retention deletes a
  // workflow's attribute rows in the statement that deletes it, so each row has its workflow.
  const workflow =
    shape === 'page' || onWorkflow.length > 0
      ? sql`join causeway_workflows as w on w.id = a0.workflow_id`
      : sql``;
  const where = conditions.length === 0 ? sql`` : sql`and ${sql.join(conditions, sql` and `)}`;
  return sql<AttributePageRow>`
    select ${columns}
      from causeway_workflow_attributes as a0 ${workflow}
     where a0.term = ${driver} ${pastPosition('a0', start)} ${where}
     ${tail}`;
}

/** The filter's states when every one is rare (0021), else null. */
export function rareStatesOnly(filter: AttributeFilterRow): readonly string[] | null {
  if (filter.states === undefined || filter.states.length === 0) return null;
  const rare: readonly string[] = rareWorkflowStates;
  return filter.states.every((state) => rare.includes(state)) ? [...new Set(filter.states)] : null;
}

function workflowConditions(filter: AttributeFilterRow): RawBuilder<unknown>[] {
  const conditions: RawBuilder<unknown>[] = [];
  if (filter.states !== undefined) {
    const states = [...new Set(filter.states)];
    conditions.push(sql`w.state = any(${states}::text[])`);
    // Rare states only: `rareStateWalk` starts from their partial index (0021) when they are
    // sparser than every term; the condition lets that index serve.
    if (rareStatesOnly(filter) !== null) {
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
  // Which term is walked decides only how much is read: the page is the same either way, so
  // the choice may see another snapshot than the page.
  const walked = await sparsestTerm(
    db,
    attributeTerms(ask.filter),
    walkStart(ask),
    rareStatesOnly(ask.filter),
  );
  const query = attributePageQuery(ask, 'page', walked);
  return query === null ? [] : (await query.execute(db)).rows;
}

/** How many workflows match, counting no further than `atMost`. */
export async function attributeCountRead(
  db: ReadDb,
  filter: AttributeFilterRow,
  atMost: number,
): Promise<number> {
  const ask: AttributePageAsk = { filter, order: 'newest_first', after: null, limit: atMost };
  const walked = await sparsestTerm(
    db,
    attributeTerms(filter),
    walkStart(ask),
    rareStatesOnly(filter),
  );
  const matching = attributePageQuery(ask, 'count', walked);
  if (matching === null) return 0;
  const { rows } = await sql<{
    count: string;
  }>`select count(*) as count from (${matching}) as matching`.execute(db);
  return Number(rows[0]?.count ?? 0);
}
