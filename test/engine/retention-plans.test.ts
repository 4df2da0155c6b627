/**
 * The log's reads by workflow still touch one partition: the primary lookups (one workflow's
 * history, a generic plan as prepared statements run it) prune to the partition of the id's
 * day at execution, and the per-task lookup behind blockers (a nested-loop parameter) runs in
 * one partition per loop. Seeded with log rows in several day partitions; plans are EXPLAIN
 * ANALYZE on real PostgreSQL.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { retentionWorkflows } from './retention-support';

const database = useTestDatabase();
const url = () => database().url;
const rowsPerDay = 3_000;
let client: pg.Client;

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Actual Loops'?: number;
  readonly 'Subplans Removed'?: number;
  readonly Plans?: readonly PlanNode[];
}
const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

let prepared = 0;

/**
 * The log partitions a statement's execution read (scan nodes that ran at least once), planned
 * once as a generic plan (as the engine's prepared statements are) for one uuid parameter.
 */
async function partitionsRead(text: string, workflowId: string): Promise<string[]> {
  prepared += 1;
  await client.query('set plan_cache_mode = force_generic_plan');
  await client.query(`prepare probe${prepared}(uuid) as ${text}`);
  const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
    `explain (analyze, format json, timing off) execute probe${prepared}(${client.escapeLiteral(workflowId)})`,
  );
  const plan = nodes(
    (rows[0] as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0]?.Plan as PlanNode,
  );
  return plan
    .filter((node) => node['Relation Name']?.startsWith('causeway_transitions') === true)
    .filter((node) => (node['Actual Loops'] ?? 0) > 0)
    .map((node) => node['Relation Name'] as string);
}

beforeAll(async () => {
  const cw = testEngine(url(), { workflows: retentionWorkflows });
  await cw.migrate();
  await cw.close();
  // Log rows of made-up workflows, spread over the first partition and three days ahead.
  await query(
    url(),
    `insert into causeway_transitions (workflow_id, to_state, reason, actor, attempt, at)
     select (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7000-8000-' || lpad(to_hex(n), 12, '0'))::uuid,
            'queued', 'submitted', 'client', 0, now()
       from generate_series(0, 3) as day, generate_series(1, $1::int) as n,
            lateral (select lpad(to_hex(((extract(epoch from now()) + day * 86400) * 1000)::bigint), 12, '0') as h) as x`,
    [rowsPerDay],
  );
  await query(url(), 'analyze causeway_transitions');
  client = new pg.Client({ connectionString: url() });
  await client.connect();
});

afterAll(async () => {
  await client.end();
});

describe('the log read by workflow id', () => {
  it('spreads the seed over several partitions', async () => {
    const rows = await query<{ n: number }>(
      url(),
      'select count(distinct tableoid)::int as n from causeway_transitions',
    );
    expect(rows[0]?.n).toBeGreaterThanOrEqual(3);
  });

  it("reads one workflow's history in its own partition only, with a generic plan", async () => {
    const [probe] = await query<{ workflow_id: string; partition: string }>(
      url(),
      `select workflow_id::text, tableoid::regclass::text as partition from causeway_transitions
        order by workflow_id desc limit 1`,
    );
    const read = await partitionsRead(
      'select * from causeway_transitions where workflow_id = $1 order by id',
      probe?.workflow_id as string,
    );
    expect(read).toEqual([probe?.partition]);
  });

  it("reads a task's last edge in one partition per loop (the blockers' lateral)", async () => {
    const [probe] = await query<{ workflow_id: string; partition: string }>(
      url(),
      `select workflow_id::text, tableoid::regclass::text as partition from causeway_transitions
        order by workflow_id limit 1`,
    );
    const read = await partitionsRead(
      `select e.id from (select $1::uuid as workflow_id) as t
         cross join lateral (select r.id from causeway_transitions as r
                              where r.workflow_id = t.workflow_id order by r.id desc limit 1) as e`,
      probe?.workflow_id as string,
    );
    expect(read).toEqual([probe?.partition]);
  });
});
