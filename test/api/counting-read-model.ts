import { type CausewayDatabase, createReadModel, type ReadModel } from '@causeway/engine';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterEach } from 'vitest';

/** Read models made by a test file are closed after each test. */
const pools = new Set<Kysely<CausewayDatabase>>();
afterEach(async () => {
  await Promise.all([...pools].map((db) => db.destroy()));
  pools.clear();
});

/**
 * A read model whose SQL statements are counted (the transition stream's own polling
 * excluded), for tests that a page of results costs a fixed number of statements.
 */
export function countingReadModel(url: string): { readModel: ReadModel; statements: string[] } {
  const statements: string[] = [];
  const db = new Kysely<CausewayDatabase>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 4 }) }),
    log(event) {
      const text = event.query.sql;
      if (text.includes('pg_sequence_last_value') || text.includes('id <= ')) return;
      statements.push(text);
    },
  });
  pools.add(db);
  return { readModel: createReadModel(db), statements };
}
