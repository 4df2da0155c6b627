import { CompiledQuery, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type pg from 'pg';
import type { CausewayDatabase } from './schema';

/** The pools behind engines' Kysely instances, for statements that skip Kysely's executor. */
const pools = new WeakMap<Kysely<CausewayDatabase>, pg.Pool>();
/** Those pools whose connections keep what a session makes (not behind a transaction pooler). */
const sessionPools = new WeakSet<pg.Pool>();

/**
 * Lets `executeDirect` run statements of `db` on `pool` (the pool `db` was made with);
 * `sessionState`: each connection is one server session for its whole life, so it may keep
 * session functions (`session-functions.ts`).
 */
export function registerPool(
  db: Kysely<CausewayDatabase>,
  pool: pg.Pool,
  options: { readonly sessionState: boolean },
): void {
  pools.set(db, pool);
  if (options.sessionState) sessionPools.add(pool);
}

/** The pool for session functions of `db`, outside a transaction; undefined where none. */
export function sessionPoolOf(
  db: Kysely<CausewayDatabase> | Transaction<CausewayDatabase>,
): pg.Pool | undefined {
  const pool = db.isTransaction ? undefined : pools.get(db);
  return pool !== undefined && sessionPools.has(pool) ? pool : undefined;
}

/**
 * Executes a statement built with Kysely's `sql` template. Outside a transaction it goes
 * straight to the pool: Kysely's executor (connection provider, result handling) costs more
 * CPU a call than the rest of the client's work for a small statement, and the hot statements
 * run once per claim, result batch and submit. Inside a transaction, or for a
 * Kysely instance the engine did not make, it runs through Kysely as usual.
 */
export async function executeDirect<Row>(
  db: Kysely<CausewayDatabase> | Transaction<CausewayDatabase>,
  statement: RawBuilder<Row>,
): Promise<{ readonly rows: Row[] }> {
  const pool = db.isTransaction ? undefined : pools.get(db);
  if (pool === undefined) return statement.execute(db);
  const compiled = statement.compile(db);
  const result = await pool.query(compiled.sql, compiled.parameters as unknown[]);
  return { rows: result.rows as Row[] };
}

/**
 * Executes a statement whose text was compiled once (constants in the text, nothing of
 * Kysely's own parameters) with these parameter values: a statement sent thousands of times a
 * second need not be built and compiled again for each.
 */
export async function executeText<Row>(
  db: Kysely<CausewayDatabase> | Transaction<CausewayDatabase>,
  text: string,
  parameters: readonly unknown[],
): Promise<{ readonly rows: Row[] }> {
  const pool = db.isTransaction ? undefined : pools.get(db);
  if (pool === undefined) {
    const result = await db.executeQuery<Row>(CompiledQuery.raw(text, [...parameters]));
    return { rows: [...result.rows] };
  }
  const result = await pool.query(text, parameters as unknown[]);
  return { rows: result.rows as Row[] };
}
