import type { Kysely, RawBuilder, Transaction } from 'kysely';
import type pg from 'pg';
import type { CausewayDatabase } from './schema';

/** The pools behind engines' Kysely instances, for statements that skip Kysely's executor. */
const pools = new WeakMap<Kysely<CausewayDatabase>, pg.Pool>();

/** Lets `executeDirect` run statements of `db` on `pool` (the pool `db` was made with). */
export function registerPool(db: Kysely<CausewayDatabase>, pool: pg.Pool): void {
  pools.set(db, pool);
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
