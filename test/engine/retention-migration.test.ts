import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Kysely, type Migration, Migrator, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { note, retentionWorkflows, untilSucceeded } from './retention-support';

/**
 * Migration 0017 on a database that already has a log: the rows become the first partition,
 * still read by workflow and in id order, and new ids go on after the last one.
 */
const database = useTestDatabase();
const url = () => database().url;
const folder = fileURLToPath(new URL('../../packages/engine/src/migrations/', import.meta.url));

/** The engine's migrations up to `last`, run the way the engine runs them. */
async function migrateUpTo(last: string): Promise<void> {
  const files = (await readdir(folder)).filter((file) => /^\d{4}_.+\.sql$/.test(file)).sort();
  const migrations: Record<string, Migration> = {};
  for (const file of files) {
    const text = await readFile(`${folder}${file}`, 'utf8');
    migrations[file.replace(/\.sql$/, '')] = {
      up: async (db) => void (await sql.raw(text).execute(db)),
    };
  }
  const db = new Kysely({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url() }) }),
  });
  try {
    const { error } = await new Migrator({
      db,
      provider: { getMigrations: async () => migrations },
      migrationTableName: 'causeway_migrations',
      migrationLockTableName: 'causeway_migrations_lock',
    }).migrateTo(last);
    if (error !== undefined) throw error;
  } finally {
    await db.destroy();
  }
}

it('turns the existing log into the first partition and goes on from its last id', async () => {
  await migrateUpTo('0016_event_reason');
  const before = await query<{ regclass: string | null }>(
    url(),
    "select to_regclass('causeway_transitions_initial')::text as regclass",
  );
  expect(before).toEqual([{ regclass: null }]);
  const cw = testEngine(url(), { workflows: retentionWorkflows });
  // Today's submit writes the version a workflow records (0036, R54): the old schema holds
  // the column for this one submit only, and 0036 adds it for good.
  await query(url(), 'alter table causeway_workflows add column version text');
  const old = (await cw.submit(note.name, { n: 1 })).workflow.id;
  await query(url(), 'alter table causeway_workflows drop column version');
  const oldRows = await query<{ id: string }>(
    url(),
    'select id::text from causeway_transitions order by id',
  );
  expect(oldRows.length).toBeGreaterThan(0);

  // Later migrations follow these; this test is about 0017 and the ones that came with it.
  expect((await cw.migrate()).slice(0, 4)).toEqual([
    '0017_transition_partitions',
    '0018_event_waits_locked',
    '0019_event_deliveries_unchecked',
    '0020_event_waits_one_pair',
  ]);
  const kept = await query<{ id: string; partition: string }>(
    url(),
    'select id::text, tableoid::regclass::text as partition from causeway_transitions where workflow_id = $1 order by id',
    [old],
  );
  expect(kept.map((row) => row.id)).toEqual(oldRows.map((row) => row.id));
  expect(new Set(kept.map((row) => row.partition))).toEqual(
    new Set(['causeway_transitions_initial']),
  );

  const worker = await cw.startWorker({ queues: ['q-retention'], concurrency: 2 });
  const fresh = (await cw.submit(note.name, { n: 2 })).workflow.id;
  await untilSucceeded(url(), [old, fresh]);
  await worker.stop();
  const newIds = await query<{ id: string }>(
    url(),
    'select id::text from causeway_transitions where workflow_id = $1 order by id',
    [fresh],
  );
  const lastOld = BigInt(oldRows.at(-1)?.id ?? '0');
  expect(newIds.every((row) => BigInt(row.id) > lastOld)).toBe(true);
  expect(await logMismatches(url())).toEqual([]);
});
