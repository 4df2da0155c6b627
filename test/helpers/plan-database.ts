import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { useTestDatabase } from './database';
import { testEngine } from './engine';

/**
 * A test file's database for plan tests: migrated, filled by `load` (SQL, so a history of a
 * million rows takes seconds), analyzed, with a Kysely of one connection on it. Call at the top
 * level of the file; the getters work inside tests and hooks.
 */
export function usePlanDatabase(
  load: (url: string) => Promise<void>,
  timeoutMs = 180_000,
): { url(): string; db(): Kysely<CausewayDatabase> } {
  const database = useTestDatabase();
  let db: Kysely<CausewayDatabase> | undefined;
  beforeAll(async () => {
    const url = database().url;
    const engine = testEngine(url, { workflows: [] });
    await engine.migrate();
    await engine.close();
    await load(url);
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    await pool.query('analyze');
    db = new Kysely<CausewayDatabase>({ dialect: new PostgresDialect({ pool }) });
  }, timeoutMs);
  afterAll(async () => {
    await db?.destroy();
  });
  return {
    url: () => database().url,
    db: () => {
      if (db === undefined) throw new Error('usePlanDatabase(): not loaded yet');
      return db;
    },
  };
}
