import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase, useTestDatabase } from './database';
import { waitFor } from './wait-for';

const db = useTestDatabase();

async function query<R extends pg.QueryResultRow>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

describe('test database', () => {
  it('is a real PostgreSQL server, connected to the database it was created as', async () => {
    const [row] = await query<{ version: string; num: string; database: string }>(
      db().url,
      `select version() as version, current_setting('server_version_num') as num,
              current_database() as database`,
    );
    expect(row?.version).toMatch(/^PostgreSQL \d+/);
    // DROP DATABASE ... WITH (FORCE) needs 13+.
    expect(Number(row?.num)).toBeGreaterThanOrEqual(130_000);
    expect(row?.database).toBe(db().name);
    expect(db().name).toMatch(/^cw_[0-9a-f]{16}$/);
  });

  it('runs DDL and DML', async () => {
    const client = new pg.Client({ connectionString: db().url });
    await client.connect();
    try {
      await client.query('create table note (id serial primary key, body text not null)');
      await client.query('insert into note (body) values ($1), ($2)', ['first', 'zweite ✓']);
      const { rows } = await client.query<{ id: number; body: string }>(
        'select id, body from note order by id',
      );
      expect(rows).toEqual([
        { id: 1, body: 'first' },
        { id: 2, body: 'zweite ✓' },
      ]);
      const { rows: encoding } = await client.query<{ server_encoding: string }>(
        'show server_encoding',
      );
      expect(encoding[0]?.server_encoding).toBe('UTF8');
    } finally {
      await client.end();
    }
  });
});

describe('createTestDatabase', () => {
  const created: TestDatabase[] = [];
  afterAll(async () => {
    await Promise.all(created.map((database) => database.drop()));
  });

  it('creates isolated databases', async () => {
    const a = await createTestDatabase();
    const b = await createTestDatabase();
    created.push(a, b);
    expect(a.name).not.toBe(b.name);

    await query(a.url, 'create table item (value text)');
    await query(a.url, "insert into item values ('only in a')");

    expect(await query(a.url, 'select value from item')).toEqual([{ value: 'only in a' }]);
    const [bTables] = await query<{ count: string }>(
      b.url,
      "select count(*) as count from information_schema.tables where table_name = 'item'",
    );
    expect(bTables?.count).toBe('0');
    // Same table name in b is independent of a's.
    await query(b.url, 'create table item (value text)');
    expect(await query(b.url, 'select value from item')).toEqual([]);
  });

  it('drop() removes the database even with a connection still open', async () => {
    const database = await createTestDatabase();
    const leaked = new pg.Client({ connectionString: database.url });
    // The forced drop terminates this connection; swallow the resulting error event.
    leaked.on('error', () => {});
    await leaked.connect();

    await database.drop();
    await database.drop(); // idempotent

    const rows = await query<{ count: string }>(
      database.url.replace(`/${database.name}`, '/postgres'),
      'select count(*) as count from pg_database where datname = $1',
      [database.name],
    );
    expect(rows[0]?.count).toBe('0');
    await leaked.end().catch(() => {});
  });
});

describe('waitFor', () => {
  it('resolves with the first truthy value', async () => {
    let calls = 0;
    const value = await waitFor(async () => {
      calls += 1;
      return calls >= 3 ? `done after ${calls}` : undefined;
    });
    expect(value).toBe('done after 3');
  });

  it('throws a descriptive error on timeout', async () => {
    await expect(
      waitFor(() => false, { timeoutMs: 50, intervalMs: 10, description: 'the impossible' }),
    ).rejects.toThrow(/timed out after 50 ms .* waiting for the impossible/);
  });

  it('rethrows predicate errors immediately', async () => {
    await expect(
      waitFor(
        () => {
          throw new Error('broken check');
        },
        { timeoutMs: 10_000 },
      ),
    ).rejects.toThrow('broken check');
  });
});
