/**
 * The workflow list filtered by attributes (R55) beside 1,000,000 workflows:
 * `pnpm exec tsx bench/attribute-filter.ts [--workflows 1000000] [--runs 200] [--first 20]`.
 * A fresh database gets the workflows in SQL (created a second apart, as the engine writes them:
 * the jsonb column and one attribute row each): a tenant of 100 (10,000 workflows each), a plan
 * of two (`free`, `pro`), one in 100,000 a rare `audit: true`; then ANALYZE. Each case times
 * the engine's list method (`createReadModel(...).workflowPage`, what the GraphQL `workflows`
 * resolver calls) answering its FIRST page, newest first, `--runs` times after a warm-up, the
 * tenant drawn at random each run: a common value, the rare one, a common and the rare one
 * together, two common ones together, and a common one with a state. Then, for comparison, the
 * design not chosen: a GIN (jsonb_path_ops) index on the workflows' jsonb, queried with `@>`
 * for the same first pages. Prints p50 and p99 in milliseconds, and the JSON. Uses DATABASE_URL
 * like `pnpm bench` (else embedded PostgreSQL).
 */
import { parseArgs } from 'node:util';
import { createEngine, createReadModel } from '@causeway/engine';
import type { WorkflowAttributes, WorkflowState } from '@causeway/workflow/internal';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import type { CausewayDatabase } from '../packages/engine/src/db/schema';
import { now } from './clock';
import { adminPool, startServer } from './server';
import { latencyStats } from './stats';
import { repoRoot } from './versions';

const { values } = parseArgs({
  options: {
    workflows: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '200' },
    first: { type: 'string', default: '20' },
  },
});
const workflowCount = Number(values.workflows);
const runs = Number(values.runs);
const first = Number(values.first);
const tenants = 100;

const workflowsSql = `
insert into causeway_workflows (id, name, state, input, created_at, updated_at, attributes)
select gen_random_uuid(), 'billing', case when g % 1000 = 3 then 'dead' else 'succeeded' end,
       '{}', now() - ($1::int - g) * interval '1 second', now(),
       jsonb_build_object('tenant', 't' || (g % ${tenants}),
                          'plan', case when g % 2 = 0 then 'pro' else 'free' end)
         || case when g % 100000 = 7 then '{"audit": true}'::jsonb else '{}'::jsonb end
  from generate_series(1, $1::int) g`;
const attributeRowsSql = `
insert into causeway_workflow_attributes (term, created_at, workflow_id)
select causeway_attribute_term(a.key, a.value), w.created_at, w.id
  from causeway_workflows w, jsonb_each(w.attributes) a`;

const tenant = () => `t${Math.floor(Math.random() * tenants)}`;
const cases: {
  readonly label: string;
  readonly attributes: () => WorkflowAttributes;
  readonly states?: readonly WorkflowState[];
}[] = [
  { label: 'common: tenant (1 in 100)', attributes: () => ({ tenant: tenant() }) },
  { label: 'rare: audit (1 in 100,000)', attributes: () => ({ audit: true }) },
  // Every audit workflow is tenant t7's: the first finds all ten, the second mostly none.
  { label: 'two filters: tenant t7 + audit', attributes: () => ({ tenant: 't7', audit: true }) },
  {
    label: 'two filters: any tenant + audit',
    attributes: () => ({ tenant: tenant(), audit: true }),
  },
  {
    label: 'two filters: tenant + plan (1 in 200)',
    attributes: () => ({ tenant: tenant(), plan: 'pro' }),
  },
  {
    label: 'tenant, state dead (1 in 100,000)',
    attributes: () => ({ tenant: tenant() }),
    states: ['dead'],
  },
];

const server = await startServer(repoRoot);
const name = 'bench_attribute_filter';
const url = await server.createDatabase(name);
try {
  const engine = createEngine({
    databaseUrl: url,
    workflows: [],
    logger: pino({ level: 'silent' }),
  });
  await engine.migrate();
  await engine.close();
  const admin = adminPool(url);
  const loadStarted = now();
  await admin.query(workflowsSql, [workflowCount]);
  await admin.query(attributeRowsSql);
  await admin.query('vacuum analyze');
  const loadSeconds = (now() - loadStarted) / 1000;
  await admin.end();

  const db = new Kysely<CausewayDatabase>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
  });
  const reads = createReadModel(db);
  const results: Record<string, unknown>[] = [];
  const measure = async (label: string, page: () => Promise<number>) => {
    for (let run = 0; run < 20; run += 1) await page();
    const latencies: number[] = [];
    let rows = 0;
    for (let run = 0; run < runs; run += 1) {
      const started = now();
      rows += await page();
      latencies.push(now() - started);
    }
    const stats = latencyStats(latencies);
    results.push({
      case: label,
      p50Ms: Number(stats.p50.toFixed(2)),
      p99Ms: Number(stats.p99.toFixed(2)),
      meanRows: Number((rows / runs).toFixed(1)),
    });
  };
  for (const item of cases) {
    await measure(item.label, async () => {
      const filter = {
        attributes: item.attributes(),
        ...(item.states === undefined ? {} : { states: item.states }),
      };
      return (await reads.workflowPage(filter, { limit: first })).rows.length;
    });
  }
  await db.destroy();

  // The design not chosen, on the same rows: GIN finds the rows, then sorts them all.
  const gin = new pg.Pool({ connectionString: url, max: 1 });
  await gin.query(
    'create index bench_attributes_gin on causeway_workflows using gin (attributes jsonb_path_ops)',
  );
  await gin.query('analyze causeway_workflows');
  for (const item of cases) {
    await measure(`GIN @>: ${item.label}`, async () => {
      const { rows } = await gin.query(
        `select * from causeway_workflows
          where attributes @> $1::jsonb and ($2::text[] is null or state = any($2))
          order by created_at desc, id desc limit $3`,
        [JSON.stringify(item.attributes()), item.states ?? null, first + 1],
      );
      return Math.min(rows.length, first);
    });
  }
  await gin.end();

  console.log(
    `PostgreSQL ${server.version} (${server.kind}); ${workflowCount.toLocaleString('en')} workflows loaded in ${loadSeconds.toFixed(1)} s; first page of ${first}, ${runs} runs each`,
  );
  console.log('case'.padEnd(50), 'p50 ms'.padStart(8), 'p99 ms'.padStart(8), 'rows'.padStart(6));
  for (const row of results) {
    console.log(
      String(row.case).padEnd(50),
      String(row.p50Ms).padStart(8),
      String(row.p99Ms).padStart(8),
      String(row.meanRows).padStart(6),
    );
  }
  console.log(
    JSON.stringify({ version: server.version, workflows: workflowCount, first, runs, results }),
  );
} finally {
  await server.dropDatabase(name);
  await server.stop();
}
