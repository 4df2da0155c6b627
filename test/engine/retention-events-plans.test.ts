/**
 * Retention's deletes of events and deliveries read indexes only, beside a realistic history:
 * many finished workflows, old events (half of them delivered to workflows already removed)
 * and recent ones; its delete of versions (R54) probes only the workflows of each version's
 * name. Plans are EXPLAIN on real PostgreSQL of the statements the run executes.
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historySql } from '../../bench/causeway-history';
import { eventDeleteBatchSql } from '../../packages/engine/src/db/retention/event-delete-batch';
import {
  unlistedVersionsDeleteSql,
  unlistedVersionsLockSql,
  unlistedVersionsSql,
  versionRecordedSql,
} from '../../packages/engine/src/db/retention/version-delete';
import { workflowDeleteBatchSql } from '../../packages/engine/src/db/retention/workflow-delete-batch';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { explainNodes, type PlanNode } from '../helpers/query-plans';
import { dayMs, retentionWorkflows } from './retention-support';

const database = useTestDatabase();
const url = () => database().url;
const events = 40_000;
const workflows = 20_000;
let db: Kysely<CausewayDatabase>;

async function planOf(statement: { compile(db: Kysely<CausewayDatabase>): unknown }) {
  const compiled = statement.compile(db) as { sql: string; parameters: readonly unknown[] };
  return explainNodes(url(), compiled.sql, compiled.parameters);
}

const watched = ['causeway_events', 'causeway_event_deliveries', 'causeway_workflows'];
const seqScans = (plan: PlanNode[]) =>
  plan
    .filter((node) => node['Node Type'] === 'Seq Scan')
    .filter((node) => watched.includes(node['Relation Name'] ?? ''))
    .map((node) => node['Relation Name']);
const indexesRead = (plan: PlanNode[]) => plan.flatMap((node) => node['Index Name'] ?? []);

beforeAll(async () => {
  const cw = testEngine(url(), { workflows: retentionWorkflows });
  await cw.migrate();
  await cw.close();
  await query(url(), historySql, [workflows, 'retention-note']);
  // One event a minute back from now; the older half each delivered to a workflow long gone.
  await query(
    url(),
    `insert into causeway_events (id, name, key, payload, sent_by, received_at)
     select gen_random_uuid(), 'retention.approved', 'k' || n, '{}', 'client',
            now() - n * interval '1 minute'
       from generate_series(1, $1::int) as n`,
    [events],
  );
  await query(
    url(),
    `insert into causeway_event_deliveries (event_id, task_id, workflow_id, delivered_at)
     select id, gen_random_uuid(), gen_random_uuid(), received_at from causeway_events
      where received_at < now() - $1::int / 2 * interval '1 minute'`,
    [events],
  );
  // A second workflow name with a small history over three versions.
  await query(url(), historySql, [1_000, 'retention-versioned']);
  await query(
    url(),
    `update causeway_workflows set version = 'v' || (get_byte(uuid_send(id), 15) % 3)
      where name = 'retention-versioned'`,
  );
  await query(url(), 'analyze');
  db = new Kysely<CausewayDatabase>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url(), max: 1 }) }),
  });
}, 120_000);

afterAll(async () => {
  await db?.destroy();
});

describe('retention deletes beside a long history', () => {
  it('finds old events through causeway_events_received, never by scanning a table', async () => {
    const plan = await planOf(eventDeleteBatchSql(new Date(Date.now() - 10 * 60_000), 500));
    expect(seqScans(plan)).toEqual([]);
    expect(indexesRead(plan)).toContain('causeway_events_received');
  });

  it("deletes a batch of workflows with their tasks' deliveries by index", async () => {
    const plan = await planOf(
      workflowDeleteBatchSql(
        { lowerId: null, upperId: 'ffffffff-ffff-7fff-bfff-ffffffffffff' },
        new Date(Date.now() - dayMs / 2),
        500,
      ),
    );
    expect(seqScans(plan)).toEqual([]);
    expect(indexesRead(plan)).toContain('causeway_event_deliveries_task');
  });

  it('probes the workflows once per version, ending at its first, when it deletes versions', async () => {
    for (const version of ['v-none', 'v1']) {
      const plan = await planOf(versionRecordedSql('retention-versioned', version));
      const reads = plan.filter((node) => node['Relation Name'] === 'causeway_workflows');
      expect(plan[0]?.['Node Type'], version).toBe('Limit');
      expect(reads, version).toHaveLength(1);
    }
    // Neither the list, the lock nor the delete of the versions reads the workflows.
    for (const statement of [
      unlistedVersionsSql(),
      unlistedVersionsLockSql([{ name: 'retention-versioned', version: 'v-none' }]),
      unlistedVersionsDeleteSql([{ name: 'retention-versioned', version: 'v-none' }]),
    ]) {
      const plan = await planOf(statement);
      expect(plan.map((node) => node['Relation Name']).filter(Boolean)).not.toContain(
        'causeway_workflows',
      );
    }
  });
});
