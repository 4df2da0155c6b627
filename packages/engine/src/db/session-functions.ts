import type pg from 'pg';

/**
 * A PL/pgSQL function that each connection creates for itself in `pg_temp` before its first
 * call: generated from the edge table like the engine's statements, kept by the connection
 * like a prepared statement (its plans too), gone with it, and never a schema change.
 */
export interface SessionFunction {
  /** Unique per text (a hash of it), so connections never mix two versions. */
  readonly name: string;
  readonly createText: string;
  /** The statement that calls it (its parameters are the call's). */
  readonly callText: string;
}

const created = new WeakMap<pg.PoolClient, Set<string>>();

/**
 * Calls `fn` on a connection of `pool`, after creating it there if that connection has not
 * yet. A failed call releases its connection as `pool.query` does (it is closed).
 */
export async function callSessionFunction<Row>(
  pool: pg.Pool,
  fn: SessionFunction,
  parameters: readonly unknown[],
): Promise<Row[]> {
  const client = await pool.connect();
  try {
    let names = created.get(client);
    if (names === undefined) {
      names = new Set();
      created.set(client, names);
    }
    if (!names.has(fn.name)) {
      await client.query(fn.createText);
      names.add(fn.name);
    }
    const result = await client.query(fn.callText, parameters as unknown[]);
    client.release();
    return result.rows as Row[];
  } catch (error) {
    client.release(error instanceof Error ? error : new Error(String(error)));
    throw error;
  }
}
