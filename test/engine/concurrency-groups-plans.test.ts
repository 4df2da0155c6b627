/**
 * The concurrency reads (R50: `concurrencyGroups` and the metrics' slots per group) read no
 * table in full: beside 20,000 finished keyed tasks, their plans reach `causeway_tasks` only
 * through the slot holders' and the keyed ready tasks' partial indexes. A control drops the
 * slot holders' index and sees a sequential scan, so the seed is large enough for the planner
 * to prefer one where no index serves.
 */
import { type CausewayDatabase, createReadModel } from '@causeway/engine';
import { defineWorkflow, step } from '@causeway/workflow';
import { workflowRegistry } from '@causeway/workflow/internal';
import { type CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { historySql } from '../../bench/causeway-history';
import { claimReadyTasks } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import { listConcurrencyGroups } from '../../packages/engine/src/runtime/concurrency/concurrency-groups';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { explainNodes, type PlanNode } from '../helpers/query-plans';

const database = useTestDatabase();
const url = () => database().url;
const finished = 20_000;
const queue = 'q-group-plans';
const input = z.object({ tenant: z.string() });
const keyed = defineWorkflow({
  name: 'group-plans',
  input,
  steps: {
    only: step<z.output<typeof input>>({
      queue,
      concurrency: { key: (ctx) => ctx.input.tenant, limit: 2 },
      run: () => null,
    }),
  },
});
const definitions = workflowRegistry([keyed]);

const seqScans = (plan: readonly PlanNode[]) =>
  plan
    .filter((node) => node['Node Type'] === 'Seq Scan')
    .map((node) => node['Relation Name'] as string);
const indexes = (plan: readonly PlanNode[]) =>
  plan.flatMap((node) => (node['Index Name'] === undefined ? [] : [node['Index Name']]));

beforeAll(async () => {
  const cw = testEngine(url(), { workflows: [keyed] });
  await cw.migrate();
  await query(url(), historySql, [finished, 'group-plans']);
  // Finished tasks of the same group, over many keys: what an index on keys alone would read.
  await query(
    url(),
    `update causeway_tasks set concurrency_group = 'group-plans/only',
       concurrency_key = 'k-' || (hashtext(id::text) & 1023), concurrency_limit = 2
     where state = 'succeeded'`,
  );
  for (let n = 0; n < 20; n += 1) await cw.submit(keyed.name, { tenant: `k-${n % 5}` });
  await sql`update causeway_clock set offset_ms = offset_ms + 60000`.execute(cw.db);
  await cw.db
    .transaction()
    .execute((tx) =>
      claimReadyTasks(
        tx,
        { definitions, leaseMs: 30_000, random: Math.random },
        { queue, limit: 20, holder: cw.holder },
      ),
    );
  await cw.close();
  await query(url(), 'analyze');
}, 120_000);

/** The statements the concurrency reads run, as they ran (captured from Kysely's log). */
async function capturedStatements(): Promise<{ groups: CompiledQuery; metrics: CompiledQuery }> {
  const captured: CompiledQuery[] = [];
  const db = new Kysely<CausewayDatabase>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url(), max: 1 }) }),
    log: (event) => {
      if (event.level === 'query' && /^\s*(select|with)\b/i.test(event.query.sql)) {
        captured.push(event.query);
      }
    },
  });
  try {
    const [group] = await listConcurrencyGroups(db, definitions);
    expect(group).toMatchObject({ group: 'group-plans/only', keysBusy: 5, held: 10, queued: 10 });
    const snapshot = await createReadModel(db).metricsSnapshot();
    expect(snapshot.concurrencySlots).toEqual([{ group: 'group-plans/only', held: 10 }]);
  } finally {
    await db.destroy();
  }
  expect(captured).toHaveLength(2);
  return { groups: captured[0] as CompiledQuery, metrics: captured[1] as CompiledQuery };
}

describe('the concurrency reads', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: url() });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
  });

  it(`read tasks through partial indexes beside ${finished.toLocaleString('en')} finished keyed tasks`, async () => {
    const { groups, metrics } = await capturedStatements();
    const groupsPlan = await explainNodes(client, groups.sql, groups.parameters);
    expect(seqScans(groupsPlan)).not.toContain('causeway_tasks');
    expect(indexes(groupsPlan)).toEqual(
      expect.arrayContaining(['causeway_tasks_slot_holders', 'causeway_tasks_keyed_ready']),
    );
    const metricsPlan = await explainNodes(client, metrics.sql, metrics.parameters);
    expect(seqScans(metricsPlan)).not.toContain('causeway_tasks');
    expect(indexes(metricsPlan)).toContain('causeway_tasks_slot_holders');
  });

  it('would scan the tasks in full without the slot holders’ index', async () => {
    const { groups } = await capturedStatements();
    await client.query('begin');
    try {
      await client.query('drop index causeway_tasks_slot_holders');
      const plan = await explainNodes(client, groups.sql, groups.parameters);
      expect(seqScans(plan)).toContain('causeway_tasks');
    } finally {
      await client.query('rollback');
    }
  });
});
