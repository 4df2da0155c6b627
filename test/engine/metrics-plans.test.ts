/**
 * A scrape reads no table in full: every statement the metrics run (the live gauges'
 * snapshot and the log counters' range read) is explained on a database holding many finished
 * workflows (tasks, log rows, delivered outbox messages), many schedules not due and many
 * registry rows of gone workers, beside a few live rows of every kind, and its plan reads each
 * of those tables through an index only. A control drops the index of pending tasks and sees
 * the plan turn into a sequential scan, so the seed is large enough for the planner to prefer
 * one where no index serves.
 */
import { createReadModel } from '@causeway/engine';
import { type CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historySql } from '../../bench/causeway-history';
import { transitionEdgesRange } from '../../packages/engine/src/db/metrics/transition-edges';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';

const database = useTestDatabase();
const url = () => database().url;
const finishedWorkflows = 20_000;
/** The tables that grow with finished work, the schedules and the registry (seeded large). */
const largeTables = [
  'causeway_tasks',
  'causeway_transitions',
  'causeway_workflows',
  'causeway_outbox',
  'causeway_schedules',
  'causeway_workers',
];

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly Plans?: readonly PlanNode[];
}
const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

async function explain(client: pg.ClientBase, compiled: CompiledQuery): Promise<PlanNode[]> {
  const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
    `explain (format json) ${compiled.sql}`,
    [...compiled.parameters],
  );
  return nodes(
    (rows[0] as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0]?.Plan as PlanNode,
  );
}

const seqScans = (plan: readonly PlanNode[]) =>
  plan
    .filter((node) => node['Node Type'] === 'Seq Scan')
    .map((node) => node['Relation Name'] as string)
    .filter((table) => largeTables.includes(table));
const indexes = (plan: readonly PlanNode[]) =>
  plan.flatMap((node) => (node['Index Name'] === undefined ? [] : [node['Index Name']]));

/** Live rows of every kind the gauges count: a workflow with a task in each live state. */
async function seedLive(databaseUrl: string): Promise<void> {
  await query(
    databaseUrl,
    `with w as (
       insert into causeway_workflows (id, name, state, input, created_at, updated_at)
       select gen_random_uuid(), 'live', 'running', '{}', now(), now() from generate_series(1, 5)
       returning id)
     insert into causeway_tasks (id, workflow_id, step, queue, state, max_attempts, run_at,
                                 lease_holder, lease_epoch, lease_expires_at, receipt_id,
                                 receipt_deadline_at, event_name, event_key, wait_since,
                                 wait_timeout_at, created_at, updated_at)
     select gen_random_uuid(), w.id, s.state, 'default', s.state, 3,
            case when s.state = 'queued' then now() - interval '1 minute' end,
            case when s.state in ('leased', 'cancel_requested') then 'host/1/boot' end, 1,
            case when s.state in ('leased', 'cancel_requested') then now() + interval '30 seconds' end,
            case when s.state = 'awaiting_receipt' then 'r-' || w.id end,
            case when s.state = 'awaiting_receipt' then now() + interval '1 day' end,
            case when s.state = 'waiting' then 'seed.event' end,
            case when s.state = 'waiting' then 'k' end,
            case when s.state = 'waiting' then now() end,
            case when s.state = 'waiting' then now() + interval '1 day' end,
            now(), now()
       from w cross join (values ('pending'), ('queued'), ('leased'), ('awaiting_receipt'),
                                 ('waiting'), ('cancel_requested')) as s(state)`,
  );
}

beforeAll(async () => {
  const setup = testEngine(url(), { workflows: [] });
  await setup.migrate();
  await setup.close();
  await query(url(), historySql, [finishedWorkflows, 'bench-noop']);
  await seedLive(url());
  // Finished outbox messages (one per finished task) and a few pending ones.
  await query(
    url(),
    `insert into causeway_outbox (id, task_id, workflow_id, channel, payload, state, attempts,
                                  next_attempt_at, delivered_at, created_at)
     select gen_random_uuid(), t.id, t.workflow_id, 'seed',  '{}',
            case when t.state = 'succeeded' then 'delivered' else 'pending' end, 1,
            now(), now(), now()
       from causeway_tasks t where t.state in ('succeeded', 'awaiting_receipt')`,
  );
  // Schedules declared in code are few; many here make a sequential scan tempting.
  await query(
    url(),
    `insert into causeway_schedules (name, workflow_name, cron, timezone, catch_up, input,
                                     next_tick_at, paused_at, paused_by, paused_reason,
                                     created_at, updated_at)
     select 'seed-' || g, 'bench-noop', '0 0 1 1 *', 'UTC', 'none', '{}',
            now() + case when g <= 3 then - interval '1 minute' else interval '300 days' end,
            case when g % 2 = 0 and g > 3 then now() end,
            case when g % 2 = 0 and g > 3 then 'seed' end,
            case when g % 2 = 0 and g > 3 then 'seed' end,
            now(), now()
       from generate_series(1, 5000) g`,
  );
  // Registry rows of engines gone within the last hour (pruned later), and two live ones.
  await query(
    url(),
    `insert into causeway_workers (holder, host, pid, queues, workflows, sweeper, engine_version,
                                   started_at, heartbeat_at, stale_at)
     select 'host/' || g || '/boot', 'host', g, '[{"name": "default", "slots": 4}]', '[]', true,
            '0.1.0', now() - interval '1 hour', now() - interval '1 hour',
            now() + case when g <= 2 then interval '1 minute' else - interval '30 minutes' end
       from generate_series(1, 5000) g`,
  );
  await query(url(), 'analyze');
}, 120_000);

/** The statements a scrape and a tally round run, as they ran (captured from Kysely's log). */
async function capturedStatements(): Promise<CompiledQuery[]> {
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
    const snapshot = await createReadModel(db).metricsSnapshot();
    expect(snapshot.taskStates.map((row) => row.state).sort()).toEqual([
      'awaiting_receipt',
      'cancel_requested',
      'leased',
      'pending',
      'queued',
      'waiting',
    ]);
    expect(snapshot.taskStates.every((row) => row.count === 5)).toBe(true);
    expect(snapshot.scheduleLag).toHaveLength(3);
    expect(snapshot.outbox).toEqual([expect.objectContaining({ channel: 'seed', count: 5 })]);
    expect(snapshot.workers).toBe(2);
    expect(snapshot.queueSlots).toEqual([{ queue: 'default', workers: 2, slots: 8 }]);
    const last = BigInt(
      (
        await query<{ id: string }>(url(), 'select max(id)::text as id from causeway_transitions')
      )[0]?.id ?? '0',
    );
    const edges = await transitionEdgesRange(db, {
      after: last - 1_000n,
      upTo: last,
      limit: 1_000,
    });
    expect(edges).toHaveLength(1_000);
    expect(
      edges.filter((edge) => edge.from !== null).every((edge) => edge.secondsInState !== null),
    ).toBe(true);
  } finally {
    await db.destroy();
  }
  return captured;
}

describe('the metrics statements', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: url() });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
  });

  it(`read only through indexes beside ${finishedWorkflows.toLocaleString('en')} finished workflows`, async () => {
    const statements = await capturedStatements();
    expect(statements).toHaveLength(2); // the gauges snapshot and the log range
    const used = new Set<string>();
    for (const statement of statements) {
      const plan = await explain(client, statement);
      expect(seqScans(plan), statement.sql).toEqual([]);
      for (const index of indexes(plan)) used.add(index);
    }
    // A partition's index counts as the log's index it was made from (the log is partitioned
    // by day, docs/retention.md).
    const roots = await query<{ name: string }>(
      url(),
      `select distinct coalesce(pg_partition_root(c.oid), c.oid)::regclass::text as name
         from pg_class as c where c.relname = any($1::text[])`,
      [[...used]],
    );
    expect(roots.map((row) => row.name).sort()).toEqual(
      expect.arrayContaining([
        'causeway_outbox_due',
        'causeway_schedules_due',
        'causeway_tasks_lease_expiry',
        'causeway_tasks_pending',
        'causeway_tasks_ready',
        'causeway_tasks_receipt_deadline',
        'causeway_transitions_pkey',
        'causeway_transitions_workflow',
        'causeway_workers_stale',
      ]),
    );
    expect([...used].some((index) => index.startsWith('causeway_tasks_wait'))).toBe(true);
  });

  it('would be a sequential scan without the index of pending tasks (the seed is large enough)', async () => {
    const statements = await capturedStatements();
    const liveStates = statements.find((statement) => statement.sql.includes('union all'));
    expect(liveStates).toBeDefined();
    await client.query('begin');
    try {
      await client.query('drop index causeway_tasks_pending');
      const plan = await explain(client, liveStates as CompiledQuery);
      expect(seqScans(plan)).toEqual(['causeway_tasks']);
    } finally {
      await client.query('rollback');
    }
  });
});
