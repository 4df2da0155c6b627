import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { CausewayDatabase } from '../schema';

/**
 * Which attribute a filter of several walks (R55): the one whose rows are sparsest from the
 * page's position; each other one is looked up by the primary key per row walked. A page ends
 * once its rows are found, so the walk reads about (the page) × (the walked term's rows per
 * match): for the same matches, the sparser the walked term, the fewer rows it reads. Two
 * values that are each common but rarely together (a tenant of 1 in 100, a plan of 1 in 2)
 * read the tenant's rows, never the plan's.
 *
 * Sparsity is measured, not estimated: for each term, how far from the position its
 * `reachRows`-th row lies, read from the key (a bounded walk per term, one statement). The
 * term whose row lies furthest is sparsest there; one with fewer rows than that, sparsest of
 * all. The planner's statistics would tell as much while fresh, but left to join the terms
 * itself it may also choose a merge or hash join that reads a common term whole.
 */
export const reachRows = 200;

/** Where a page starts: the attribute rows' (created_at, workflow_id) from which it walks. */
export interface WalkStart {
  readonly newest: boolean;
  readonly after: { readonly createdAt: string; readonly id: string } | null;
}

/** `and (alias.created_at, alias.workflow_id)` past the position; nothing on a first page. */
export function pastPosition(alias: string, start: WalkStart): RawBuilder<unknown> {
  if (start.after === null) return sql``;
  return sql`and (${sql.ref(`${alias}.created_at`)}, ${sql.ref(`${alias}.workflow_id`)})
    ${start.newest ? sql`<` : sql`>`} (${start.after.createdAt}::timestamptz, ${start.after.id}::uuid)`;
}

/** The statement naming the sparsest of `terms` from the position: its index, from 0. */
export function sparsestTermQuery(
  terms: readonly RawBuilder<unknown>[],
  start: WalkStart,
): RawBuilder<{ index: number }> {
  const rows = terms.map((term, index) => sql`(${term}, ${sql.lit(index)})`);
  const direction = start.newest ? sql`desc` : sql`asc`;
  // Newest first, the sparsest term's row is the oldest; oldest first, the newest.
  return sql<{ index: number }>`
    select t.index from (values ${sql.join(rows)}) as t (term, index)
     order by (select r.created_at from causeway_workflow_attributes as r
                where r.term = t.term ${pastPosition('r', start)}
                order by r.created_at ${direction}, r.workflow_id ${direction}
               offset ${sql.lit(reachRows - 1)} limit 1) ${start.newest ? sql`asc` : sql`desc`} nulls first,
              t.index
     limit 1`;
}

/** The index of the term to walk: 0 for a single one, without reading anything. */
export async function sparsestTerm(
  db: Kysely<CausewayDatabase>,
  terms: readonly RawBuilder<unknown>[],
  start: WalkStart,
): Promise<number> {
  if (terms.length < 2) return 0;
  const { rows } = await sparsestTermQuery(terms, start).execute(db);
  return rows[0]?.index ?? 0;
}

/**
 * That the row walked (`a0`) has `term` too: its attribute row looked up by key. A scalar
 * subquery (true, or null for none), so that the planner keeps it a lookup per row walked; an
 * EXISTS it may turn into a semi-join that reads the term's rows whole.
 */
export function termProbe(term: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(select true from causeway_workflow_attributes as p
     where p.term = ${term} and p.created_at = a0.created_at and p.workflow_id = a0.workflow_id)`;
}
