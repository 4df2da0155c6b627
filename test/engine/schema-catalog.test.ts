import {
  defineWorkflow,
  errorCategories,
  reasonCodes,
  step,
  taskStates,
  workflowRegistry,
  workflowStates,
} from '@causeway/workflow/internal';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { publishNote } from '../../examples/publish-note/workflow';
import { arrayLiteral } from '../../packages/engine/src/db/array-literal';
import { claimStatement } from '../../packages/engine/src/db/claim/claim-statement';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { claimStatementPlan } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import { createTestDatabase, type TestDatabase, useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { expectLogIsSound } from './semantics-support';

/**
 * The schema as PostgreSQL sees it: the CHECKs mirror the TypeScript arrays (STYLE 9), and the
 * claim query is served by the partial index on ready rows whatever the number of finished
 * rows (R4, R8).
 */
const database = useTestDatabase();
const url = () => database().url;

beforeAll(async () => {
  const setup = testEngine(url(), { workflows: [publishNote] });
  await setup.migrate();
  await setup.close();
});

/** The values the CHECK on `table.column` alone allows, read from pg_constraint. */
async function checkedValues(databaseUrl: string, table: string, column: string) {
  const rows = await query<{ def: string }>(
    databaseUrl,
    `select pg_get_constraintdef(c.oid) as def
       from pg_constraint c
       join pg_attribute a on a.attrelid = c.conrelid and a.attnum = any (c.conkey)
      where c.contype = 'c' and c.conrelid = $1::regclass and a.attname = $2
        and cardinality(c.conkey) = 1`,
    [table, column],
  );
  expect(rows, `one CHECK constrains ${table}.${column}`).toHaveLength(1);
  const definition = (rows[0] as { def: string }).def;
  return [...definition.matchAll(/'([^']*)'::text/g)].map((match) => match[1] as string);
}

describe('state CHECK constraints mirror the TypeScript arrays', () => {
  it.each([
    ['causeway_tasks', 'state', taskStates],
    ['causeway_workflows', 'state', workflowStates],
    ['causeway_transitions', 'reason', reasonCodes],
    ['causeway_tasks', 'last_error_category', errorCategories],
  ] as const)('%s.%s', async (table, column, values) => {
    const allowed = await checkedValues(url(), table, column);
    expect(new Set(allowed).size).toBe(allowed.length);
    expect([...allowed].sort()).toEqual([...values].sort());
  });

  it('PostgreSQL itself refuses a state outside the array', async () => {
    const client = new pg.Client({ connectionString: url() });
    await client.connect();
    try {
      await client.query('begin');
      const workflowId = '00000000-0000-4000-8000-000000000001';
      await client.query(
        `insert into causeway_workflows (id, name, state, input, created_at, updated_at)
         values ($1, 'publish-note', 'queued', '{}', now(), now())`,
        [workflowId],
      );
      await client.query('savepoint s');
      await expect(
        client.query(
          `insert into causeway_tasks (id, workflow_id, step, queue, state, max_attempts, created_at, updated_at)
           values (gen_random_uuid(), $1, 'render', 'cpu', 'failed', 1, now(), now())`,
          [workflowId],
        ),
      ).rejects.toMatchObject({ code: '23514' });
      await client.query('rollback to savepoint s');
      await expect(
        client.query(`update causeway_workflows set state = 'paused' where id = $1`, [workflowId]),
      ).rejects.toMatchObject({ code: '23514' });
    } finally {
      await client.query('rollback').catch(() => undefined);
      await client.end();
    }
  });
});

const claimQuery = `select id, workflow_id from causeway_tasks
  where state = 'queued' and queue = $1 and concurrency_key is null and run_at <= causeway_now()
  order by run_at limit 10 for update skip locked`;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Parent Relationship'?: string;
  'Total Cost': number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

async function explainClaim(databaseUrl: string) {
  const rows = await query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
    databaseUrl,
    `explain (analyze, buffers, format json) ${claimQuery}`,
    ['default'],
  );
  const explained = rows[0]?.['QUERY PLAN'][0];
  if (explained === undefined) throw new Error('EXPLAIN returned no plan');
  const plan = explained.Plan;
  const all = nodes(plan);
  return {
    all,
    cost: plan['Total Cost'],
    buffers: (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0),
    text: all.map(
      (node) => `${node['Node Type']}${node['Index Name'] ? ` on ${node['Index Name']}` : ''}`,
    ),
  };
}

/**
 * The worker's real claim statement (`taskClaimInOneStatement`), explained with ANALYZE in a transaction
 * that rolls back (the 'bulk' workflow is not defined by this plan, so it claims nothing anyway).
 * `custom` plans it with its parameters, as PostgreSQL does for the first executions of a
 * prepared statement; `generic` forces the plan PostgreSQL caches and reuses after that (the
 * worker's statement is prepared), which must be as good: no scan of a whole table.
 */
async function explainFastClaim(databaseUrl: string, mode: 'custom' | 'generic') {
  const plan = claimStatementPlan(
    { definitions: workflowRegistry([publishNote]), leaseMs: 30_000, random: Math.random },
    { queue: 'default', limit: 10, holder: 'explain-host/1/boot' },
  );
  if (plan === null) throw new Error("the machine's claim should be expressible");
  const kysely = new Kysely<CausewayDatabase>({
    dialect: new PostgresDialect({ pool: new pg.Pool() }),
  });
  const compiled = claimStatement(plan).compile(kysely);
  await kysely.destroy();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('begin');
    let rows: { 'QUERY PLAN': { Plan: PlanNode }[] }[];
    if (mode === 'custom') {
      ({ rows } = await client.query(`explain (analyze, buffers, format json) ${compiled.sql}`, [
        ...compiled.parameters,
      ]));
    } else {
      await client.query('set local plan_cache_mode = force_generic_plan');
      const types = compiled.parameters.map(() => 'unknown').join(', ');
      await client.query(`prepare fast_claim (${types}) as ${compiled.sql}`);
      const literals = compiled.parameters.map((value) =>
        value === null
          ? 'null'
          : `'${(Array.isArray(value) ? arrayLiteral(value) : String(value)).replaceAll("'", "''")}'`,
      );
      ({ rows } = await client.query(
        `explain (analyze, buffers, format json) execute fast_claim (${literals.join(', ')})`,
      ));
    }
    await client.query('rollback');
    await client.query('deallocate all');
    const explained = rows[0]?.['QUERY PLAN'][0];
    if (explained === undefined) throw new Error('EXPLAIN returned no plan');
    const all = nodes(explained.Plan);
    return {
      all,
      buffers:
        (explained.Plan['Shared Hit Blocks'] ?? 0) + (explained.Plan['Shared Read Blocks'] ?? 0),
      text: all.map(
        (node) => `${node['Node Type']}${node['Index Name'] ? ` on ${node['Index Name']}` : ''}`,
      ),
    };
  } finally {
    await client.end();
  }
}

/** Finished tasks inserted directly (one workflow holds them), then fresh statistics. */
async function addFinishedTasks(databaseUrl: string, workflowId: string, from: number, to: number) {
  await query(
    databaseUrl,
    `insert into causeway_tasks (id, workflow_id, step, queue, state, attempt, max_attempts, run_at,
                                 created_at, updated_at)
     select gen_random_uuid(), $1, 'done_' || g, 'default', 'succeeded', 1, 3,
            now() - interval '1 hour', now(), now()
       from generate_series($2::int, $3::int) g`,
    [workflowId, from, to],
  );
  await query(databaseUrl, 'analyze causeway_tasks');
}

describe('the claim query uses the partial index on ready rows', () => {
  let scratch: TestDatabase;
  afterAll(async () => {
    await scratch?.drop();
  });

  it('is an Index Scan on causeway_tasks_ready whose cost does not grow with finished rows', async () => {
    // A database of its own: these rows are written without an engine, so they have no log.
    scratch = await createTestDatabase();
    const setup = testEngine(scratch.url, { workflows: [publishNote] });
    await setup.migrate();
    await setup.close();
    const workflowId = '00000000-0000-4000-8000-00000000000a';
    await query(
      scratch.url,
      `insert into causeway_workflows (id, name, state, input, created_at, updated_at)
       values ($1, 'bulk', 'running', '{}', now(), now())`,
      [workflowId],
    );
    // A few ready rows, a few delayed ones, and a few on another queue.
    await query(
      scratch.url,
      `insert into causeway_tasks (id, workflow_id, step, queue, state, max_attempts, run_at,
                                   created_at, updated_at)
       select gen_random_uuid(), $1, 'ready_' || g,
              case when g % 3 = 0 then 'network' else 'default' end, 'queued', 3,
              now() + case when g % 4 = 0 then interval '1 hour' else - interval '1 minute' end,
              now(), now()
         from generate_series(1, 12) g`,
      [workflowId],
    );

    await addFinishedTasks(scratch.url, workflowId, 1, 1_000);
    const small = await explainClaim(scratch.url);
    const smallFast = await explainFastClaim(scratch.url, 'custom');
    const smallGeneric = await explainFastClaim(scratch.url, 'generic');
    await addFinishedTasks(scratch.url, workflowId, 1_001, 20_000);
    const large = await explainClaim(scratch.url);
    const largeFast = await explainFastClaim(scratch.url, 'custom');
    const largeGeneric = await explainFastClaim(scratch.url, 'generic');
    const counts = await query<{ n: number }>(
      scratch.url,
      `select count(*)::int as n from causeway_tasks where state = 'succeeded'`,
    );
    expect(counts[0]?.n).toBe(20_000);

    for (const plan of [small, large]) {
      expect(plan.text).toContain('Index Scan on causeway_tasks_ready');
      expect(plan.all.filter((node) => node['Node Type'] === 'Seq Scan')).toEqual([]);
    }
    // Twenty times the finished rows: the same plan, the same cost, the same pages touched.
    expect(large.text).toEqual(small.text);
    expect(large.cost).toBeLessThanOrEqual(small.cost * 1.2 + 1);
    expect(large.buffers).toBeLessThanOrEqual(small.buffers + 2);
    // The same for the statement the worker runs: its candidates come from the ready index,
    // it never scans the task table, and its pages touched stay flat.
    for (const plan of [smallFast, largeFast]) {
      expect(plan.text).toContain('Index Scan on causeway_tasks_ready');
      const taskScans = plan.all.filter(
        (node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'causeway_tasks',
      );
      expect(taskScans).toEqual([]);
    }
    expect(largeFast.text).toEqual(smallFast.text);
    expect(largeFast.buffers).toBeLessThanOrEqual(smallFast.buffers + 4);
    // The cached generic plan, reused for every later claim, never scans the task table either
    // (the next test has the case that broke it).
    for (const plan of [smallGeneric, largeGeneric]) {
      expect(plan.text).toContain('Index Scan on causeway_tasks_ready');
      const taskScans = plan.all.filter(
        (node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'causeway_tasks',
      );
      expect(taskScans).toEqual([]);
    }
    expect(largeGeneric.buffers).toBeLessThanOrEqual(smallGeneric.buffers + 4);

    // And the claim returns exactly the ready rows of the queue, oldest first.
    const claimed = await query<{ id: string }>(scratch.url, claimQuery, ['default']);
    const ready = await query<{ id: string }>(
      scratch.url,
      `select id from causeway_tasks where state = 'queued' and queue = 'default'
          and run_at <= now() order by run_at`,
    );
    expect(claimed.map((row) => row.id)).toEqual(ready.map((row) => row.id));
    expect(claimed.length).toBeGreaterThan(0);
  });

  it('its cached generic plan stays on indexes with 10,000 ready one-task workflows', async () => {
    // The case where a generic plan that misjudges how many candidates come (with the limit
    // as a parameter it guessed a tenth of the ready rows) hashes the whole task and workflow
    // tables on every claim.
    const many = await createTestDatabase();
    try {
      const setup = testEngine(many.url, { workflows: [publishNote] });
      await setup.migrate();
      await setup.close();
      await query(
        many.url,
        `with w as (
           insert into causeway_workflows (id, name, state, input, created_at, updated_at)
           select gen_random_uuid(), 'bulk', 'queued', '{}', now(), now()
             from generate_series(1, 10000)
           returning id)
         insert into causeway_tasks (id, workflow_id, step, queue, state, max_attempts, run_at,
                                     created_at, updated_at)
         select gen_random_uuid(), w.id, 'only', 'default', 'queued', 3,
                now() - interval '1 minute', now(), now()
           from w`,
      );
      await query(many.url, 'analyze');
      const generic = await explainFastClaim(many.url, 'generic');
      expect(generic.text).toContain('Index Scan on causeway_tasks_ready');
      // Only the pause check (R53) reads a whole table, of one row per paused queue, and once
      // per statement: an InitPlan, not a probe per candidate.
      const scans = generic.all.filter((node) => node['Node Type'] === 'Seq Scan');
      expect(scans.map((node) => [node['Relation Name'], node['Parent Relationship']])).toEqual([
        ['causeway_queue_pauses', 'InitPlan'],
      ]);
    } finally {
      await many.drop();
    }
  });
});

describe('the log of this file', () => {
  it('holds only allowed edges, in unbroken chains, matching every current state (R25)', async () => {
    // Give the file's own database some edges: one publish-note run.
    const cw = testEngine(url(), { workflows: [publishNote] });
    const submitted = await cw.submit('publish-note', { noteId: 'schema', version: 1 });
    const worker = await cw.startWorker({ concurrency: 1 });
    await waitFor(async () => (await cw.getWorkflow(submitted.workflow.id))?.state === 'succeeded');
    await worker.stop();
    await expectLogIsSound(url());
  });
});

describe('what an edge writes', () => {
  let scratch: TestDatabase;
  afterAll(async () => {
    await scratch?.drop();
  });

  it('updates workflow rows in place (HOT) and checks no foreign keys on task, log or delivery rows', async () => {
    // A database of its own, so the table statistics count only this run.
    scratch = await createTestDatabase();
    const noop = defineWorkflow({
      name: 'hot-noop',
      input: z.object({ i: z.number() }),
      steps: { only: step({ run: () => null }) },
    });
    const cw = testEngine(scratch.url, { workflows: [noop] });
    await cw.migrate();
    await cw.submitMany(
      Array.from({ length: 200 }, (_, i) => ({ name: 'hot-noop', input: { i } })),
    );
    const worker = await cw.startWorker({ concurrency: 10 });
    await waitFor(async () => {
      const rows = await query<{ n: number }>(
        scratch.url,
        `select count(*)::int as n from causeway_workflows where state = 'succeeded'`,
      );
      return rows[0]?.n === 200;
    });
    await worker.stop();
    // Backends report table statistics when they end; the engine's end with close().
    await cw.close();
    let stats = { updates: 0, hot: 0 };
    await waitFor(async () => {
      const rows = await query<{ updates: number; hot: number }>(
        scratch.url,
        `select n_tup_upd::int as updates, n_tup_hot_upd::int as hot
           from pg_stat_user_tables where relname = 'causeway_workflows'`,
      );
      stats = rows[0] ?? stats;
      return stats.updates >= 400; // queued → running → succeeded, twice per workflow
    });
    // An update stays on its page (HOT) only if it changes no indexed column: no index of the
    // workflow table may cover what a decision changes on it. How many of them do stay depends
    // on other backends' snapshots (a page whose old versions cannot be pruned yet is full),
    // so the count only has to show that they can; with state in an index none would.
    const indexed = await query<{ index: string }>(
      scratch.url,
      `select i.relname as index from pg_index x
         join pg_class i on i.oid = x.indexrelid
         join pg_attribute a on a.attrelid = x.indrelid and a.attnum = any(x.indkey)
        where x.indrelid = 'causeway_workflows'::regclass and a.attname in ('state', 'updated_at')
        union
       select i.relname from pg_index x join pg_class i on i.oid = x.indexrelid
        where x.indrelid = 'causeway_workflows'::regclass
          and (pg_get_expr(x.indexprs, x.indrelid) ~ '\\m(state|updated_at)\\M'
            or pg_get_expr(x.indpred, x.indrelid) ~ '\\m(state|updated_at)\\M')`,
    );
    expect(indexed).toEqual([]);
    expect(stats.hot).toBeGreaterThan(0);

    const foreignKeys = await query<{ name: string }>(
      scratch.url,
      `select conname as name from pg_constraint
        where conrelid in ('causeway_transitions'::regclass, 'causeway_tasks'::regclass,
            'causeway_event_deliveries'::regclass)
          and contype = 'f'`,
    );
    expect(foreignKeys).toEqual([]);
    await expectLogIsSound(scratch.url);
  });
});
