import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import {
  Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  PostgresDialect,
  sql,
} from 'kysely';
import pg from 'pg';
import type { CausewayDatabase } from './schema';

const migrationsFolder = fileURLToPath(new URL('../migrations/', import.meta.url));

/** Numbered plain SQL files (`0001_initial.sql`, …), forward-only. */
class SqlFileMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(migrationsFolder))
      .filter((file) => /^\d{4}_.+\.sql$/.test(file))
      .sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      const text = await readFile(`${migrationsFolder}${file}`, 'utf8');
      // No parameters, so pg sends it with the simple protocol: several statements are fine.
      migrations[file.replace(/\.sql$/, '')] = {
        up: async (db) => void (await sql.raw(text).execute(db)),
      };
    }
    return migrations;
  }
}

/** Applies pending migrations in order; each runs in its own transaction under Kysely's advisory lock. */
export async function migrateToLatest(db: Kysely<CausewayDatabase>): Promise<readonly string[]> {
  const migrator = new Migrator({
    db,
    provider: new SqlFileMigrationProvider(),
    migrationTableName: 'causeway_migrations',
    migrationLockTableName: 'causeway_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName;
    throw new Error(`migration ${failed ?? '(unknown)'} failed: ${String(error)}`, {
      cause: error,
    });
  }
  return (results ?? [])
    .filter((result) => result.status === 'Success')
    .map((result) => result.migrationName);
}

/** Migrations on a connection of their own: the migration lock outlives one transaction. */
export async function migrateDirectly(directUrl: string): Promise<readonly string[]> {
  const pool = new pg.Pool({ connectionString: directUrl, max: 1 });
  const db = new Kysely<CausewayDatabase>({ dialect: new PostgresDialect({ pool }) });
  try {
    return await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}
