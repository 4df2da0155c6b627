import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';

export interface TestDatabase {
  /** Connection URL of this database (same server and credentials as the admin URL). */
  url: string;
  /** Database name, `cw_<16 hex chars>`. */
  name: string;
  /** Drops the database, terminating any connections still open to it. Idempotent. */
  drop(): Promise<void>;
}

/**
 * Creates a fresh, empty database on the test server (see global-setup.ts).
 * Prefer `useTestDatabase()` in test files; use this directly when a test needs several.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('adminDatabaseUrl');
  // Random name: test files run in parallel against the same server, and reruns must
  // not collide with databases a crashed run left behind.
  const name = `cw_${randomBytes(8).toString('hex')}`;
  await withAdminClient(adminUrl, (client) => client.query(`CREATE DATABASE ${name}`));

  let dropped = false;
  return {
    url: databaseUrl(adminUrl, name),
    name,
    async drop() {
      if (dropped) return;
      // FORCE (PostgreSQL 13+) kicks out connections a test forgot to close, so a
      // leaked pool cannot make cleanup fail.
      await withAdminClient(adminUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
      );
      dropped = true;
    },
  };
}

/**
 * One database per test file: call at the top level of the file, then call the returned
 * getter inside tests or hooks (it throws if used before `beforeAll` has run).
 *
 *   const db = useTestDatabase();
 *   it('works', async () => { const pool = new pg.Pool({ connectionString: db().url }); ... });
 */
export function useTestDatabase(): () => TestDatabase {
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });
  return () => {
    if (database === undefined) {
      throw new Error('useTestDatabase(): database is not ready; use it inside a test or hook');
    }
    return database;
  };
}

/** Same URL with the database (path) replaced; keeps credentials and query params. */
function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function withAdminClient<T>(
  adminUrl: string,
  fn: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
