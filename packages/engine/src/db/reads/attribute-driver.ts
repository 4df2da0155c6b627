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
export function pastPosition(
  alias: string,
  start: WalkStart,
  idColumn: 'workflow_id' | 'id' = 'workflow_id',
): RawBuilder<unknown> {
  if (start.after === null) return sql``;
  return sql`and (${sql.ref(`${alias}.created_at`)}, ${sql.ref(`${alias}.${idColumn}`)})
    ${start.newest ? sql`<` : sql`>`} (${start.after.createdAt}::timestamptz, ${start.after.id}::uuid)`;
}

/**
 * The walk that starts from the workflows in the filter's rare states instead of a term
 * (`sparsestTerm`'s answer for it): their partial index (0021), each term looked up by key.
 * "Tenant acme's dead workflows" reads the dead ones, not every workflow of acme.
 */
export const rareStateWalk = -1;

/**
 * The statement naming the sparsest of `terms` from the position (its index, from 0), or the
 * rare states' walk (`rareStateWalk`) when `rareStates` are given and sparser still.
 */
export function sparsestTermQuery(
  terms: readonly RawBuilder<unknown>[],
  start: WalkStart,
  rareStates: readonly string[] | null = null,
): RawBuilder<{ index: number }> {
  const rows = terms.map((term, index) => sql`(${term}, ${sql.lit(index)})`);
  const direction = start.newest ? sql`desc` : sql`asc`;
  // Each rare state's rows walked on its own in the index's order, then merged: an ordered
  // walk that stops, where `rare_state = any(...)` would read every row of the states and sort.
  const stateWalks =
    rareStates === null
      ? []
      : rareStates.map(
          (state) => sql`(select w.created_at, w.id from causeway_workflows as w
                where w.rare_state = ${state} ${pastPosition('w', start, 'id')}
                order by w.created_at ${direction}, w.id ${direction}
                limit ${sql.lit(reachRows)})`,
        );
  const states =
    stateWalks.length === 0
      ? sql``
      : sql`
      union all
      select ${sql.lit(rareStateWalk)}, (select u.created_at
                from (${sql.join(stateWalks, sql` union all `)}) as u
                order by u.created_at ${direction}, u.id ${direction}
               offset ${sql.lit(reachRows - 1)} limit 1)`;
  // Newest first, the sparsest term's row is the oldest; oldest first, the newest.
  return sql<{ index: number }>`
    select c.index from (
      select t.index, (select r.created_at from causeway_workflow_attributes as r
                where r.term = t.term ${pastPosition('r', start)}
                order by r.created_at ${direction}, r.workflow_id ${direction}
               offset ${sql.lit(reachRows - 1)} limit 1) as reach
        from (values ${sql.join(rows)}) as t (term, index)${states}
    ) as c
     order by c.reach ${start.newest ? sql`asc` : sql`desc`} nulls first, c.index
     limit 1`;
}

/**
 * The index of the term to walk, or `rareStateWalk`: 0 for a single term and no rare states,
 * without reading anything.
 */
export async function sparsestTerm(
  db: Kysely<CausewayDatabase>,
  terms: readonly RawBuilder<unknown>[],
  start: WalkStart,
  rareStates: readonly string[] | null = null,
): Promise<number> {
  if (terms.length < 2 && rareStates === null) return 0;
  const { rows } = await sparsestTermQuery(terms, start, rareStates).execute(db);
  return rows[0]?.index ?? 0;
}

/**
 * That the row walked (`a0`) has `term` too: its attribute row looked up by key. A scalar
 * subquery (true, or null for none), so that the planner keeps it a lookup per row walked; an
 * EXISTS it may turn into a semi-join that reads the term's rows whole.
 */
export function termProbe(
  term: RawBuilder<unknown>,
  walked: { readonly createdAt: RawBuilder<unknown>; readonly id: RawBuilder<unknown> } = {
    createdAt: sql`a0.created_at`,
    id: sql`a0.workflow_id`,
  },
): RawBuilder<unknown> {
  return sql`(select true from causeway_workflow_attributes as p
     where p.term = ${term} and p.created_at = ${walked.createdAt} and p.workflow_id = ${walked.id})`;
}
