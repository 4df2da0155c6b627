/**
 * The claim statement's cost beside delayed tasks, without a drain's noise:
 * `pnpm exec tsx bench/explain-claim.ts [--n 20000] [--delayed 0,1,10] [--limit 100] [--runs 15]`.
 * For each M (a multiple of N) a database gets N ready one-step workflows and M submitted a
 * day ahead (W2d's batches, interleaved); a control database gets N ready and, instead of the
 * largest M delayed, as many finished ones (W2h's history rows): the same table sizes without
 * delayed entries in the ready index. Then ANALYZE, and the worker's claim statement
 * (`claimStatement`, compiled as the worker runs it) is explained with ANALYZE and BUFFERS,
 * each run in a transaction rolled back, custom (the first executions of the prepared
 * statement) and generic (what PostgreSQL caches after them), the databases taken in turn
 * `--runs` times. Prints medians: execution and planning time, shared buffers touched, and the
 * ready-index scan's rows. Uses DATABASE_URL like `pnpm bench`; reads engine internals.
 */

import { parseArgs } from 'node:util';
import { workflowRegistry } from '@causeway/workflow/internal';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { arrayLiteral } from '../packages/engine/src/db/array-literal';
import { claimStatement } from '../packages/engine/src/db/claim/claim-statement';
import type { CausewayDatabase } from '../packages/engine/src/db/schema';
import { claimStatementPlan } from '../packages/engine/src/runtime/claim/claim-ready-tasks';
import { benchWorkflows, causewaySystem } from './causeway';
import { parallelFor } from './clock';
import { adminPool, checkpoint, startServer } from './server';
import { median } from './stats';
import { repoRoot } from './versions';
import { type Chunk, delayMs, interleavedChunks } from './workloads/drain';

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Actual Rows'?: number;
  readonly 'Shared Hit Blocks'?: number;
  readonly 'Shared Read Blocks'?: number;
  readonly Plans?: readonly PlanNode[];
}
interface Explained {
  readonly Plan: PlanNode;
  readonly 'Planning Time': number;
  readonly 'Execution Time': number;
}

const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];
const buffers = (node: PlanNode) =>
  (node['Shared Hit Blocks'] ?? 0) + (node['Shared Read Blocks'] ?? 0);

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '20000' },
    delayed: { type: 'string', default: '0,1,10' },
    limit: { type: 'string', default: '100' },
    runs: { type: 'string', default: '15' },
    /** Also print one generic run's plan as text per M, after the table. */
    text: { type: 'boolean', default: false },
  },
});
const n = Number(values.n);
const limit = Number(values.limit);
const runs = Number(values.runs);
const factors = values.delayed.split(',').map(Number);

const workflows = benchWorkflows({ onJob() {}, onStep() {}, onWorkflowDone() {} });
const plan = claimStatementPlan(
  { definitions: workflowRegistry(workflows), leaseMs: 30_000, random: Math.random },
  { queue: 'default', limit, holder: 'explain-host/1/boot' },
);
const kysely = new Kysely<CausewayDatabase>({
  dialect: new PostgresDialect({ pool: new pg.Pool() }),
});
const compiled = claimStatement(plan).compile(kysely);
await kysely.destroy();
const literals = compiled.parameters.map((value) =>
  value === null
    ? 'null'
    : `'${(Array.isArray(value) ? arrayLiteral(value) : String(value)).replaceAll("'", "''")}'`,
);

interface Subject {
  readonly label: string;
  readonly name: string;
  readonly ready: number;
  readonly delayed: number;
  readonly finished: number;
}

const kinds = ['custom', 'generic'] as const;

/** One connection per plan kind; `explain()` runs the claim once, rolled back. */
async function explainer(url: string, kind: (typeof kinds)[number]) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  if (kind === 'generic') {
    await client.query('set plan_cache_mode = force_generic_plan');
    const types = compiled.parameters.map(() => 'unknown').join(', ');
    await client.query(`prepare claim (${types}) as ${compiled.sql}`);
  }
  const statement = (options: string) =>
    kind === 'custom'
      ? client.query(`explain (${options}) ${compiled.sql}`, [...compiled.parameters])
      : client.query(`explain (${options}) execute claim (${literals.join(', ')})`);
  return {
    async explain(): Promise<Explained> {
      await client.query('begin');
      const { rows } = await statement('analyze, buffers, format json');
      await client.query('rollback');
      return rows[0]['QUERY PLAN'][0] as Explained;
    },
    async text(): Promise<string> {
      await client.query('begin');
      const { rows } = await statement('analyze, buffers');
      await client.query('rollback');
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    },
    close: () => client.end(),
  };
}

const server = await startServer(repoRoot);
const system = causewaySystem({ kind: 'causeway', concurrency: 10 });
const largest = Math.max(...factors);
const subjects: Subject[] = [
  ...factors.map((f) => ({
    label: `${(n * f).toLocaleString('en')} delayed (${f}N)`,
    name: `bench_cw_explain_d${f}`,
    ready: n,
    delayed: n * f,
    finished: 0,
  })),
  ...(largest > 0
    ? [
        {
          label: `control: ${(n * largest).toLocaleString('en')} finished, none delayed`,
          name: 'bench_cw_explain_control',
          ready: n,
          delayed: 0,
          finished: n * largest,
        },
      ]
    : []),
];
type Explainer = Awaited<ReturnType<typeof explainer>>;
/** Per subject (in order): one explainer and the runs so far per plan kind. */
const prepared: { readonly explainers: Explainer[]; readonly runs: Explained[][] }[] = [];
try {
  for (const subject of subjects) {
    const url = await server.createDatabase(subject.name);
    const pool = adminPool(url);
    try {
      await system.setup(url);
      if (subject.finished > 0) await system.insertHistory(pool, subject.finished);
      const producer = await system.producer(url, 4, 'job');
      const chunks = interleavedChunks(subject.ready, subject.delayed, 1_000);
      await parallelFor(chunks.length, 4, async (index) => {
        const { first, size, late } = chunks[index] as Chunk;
        const jobs = Array.from({ length: size }, (_, j) => ({ i: first + j }));
        if (late) await producer.submitBatchDelayed?.(jobs, delayMs);
        else await producer.submitBatch(jobs);
      });
      await producer.close();
      await pool.query('analyze');
      await checkpoint(pool);
    } finally {
      await pool.end();
    }
    prepared.push({
      explainers: await Promise.all(kinds.map((kind) => explainer(url, kind))),
      runs: kinds.map(() => []),
    });
  }
  // The databases in turn, the order reversed every other round: drift hits each alike.
  for (let run = 0; run < runs; run++) {
    const order = prepared.map((_, i) => i);
    if (run % 2 === 1) order.reverse();
    for (const i of order) {
      const { explainers, runs: byKind } = prepared[i] as (typeof prepared)[number];
      for (const [k, e] of explainers.entries()) byKind[k]?.push(await e.explain());
    }
  }
  console.log(
    `Claim statement (limit ${limit}) beside M delayed tasks, N = ${n.toLocaleString('en')} ready; medians of ${runs} EXPLAIN ANALYZE runs per row, each rolled back, the databases in turn; PostgreSQL ${server.version}\n`,
  );
  console.log(
    '| database | plan | execution ms | planning ms | shared buffers (of them read) | ready-index scan: rows, buffers | tasks claimed |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const [i, subject] of subjects.entries()) {
    for (const [k, kind] of kinds.entries()) {
      const explained = prepared[i]?.runs[k] ?? [];
      const scans = explained.map((e) =>
        nodes(e.Plan).find((node) => node['Index Name'] === 'causeway_tasks_ready'),
      );
      const claimed = explained.map(
        (e) => nodes(e.Plan).find((node) => node['Node Type'] === 'ModifyTable')?.['Actual Rows'],
      );
      const cells = [
        subject.label,
        kind,
        median(explained.map((e) => e['Execution Time'])).toFixed(2),
        median(explained.map((e) => e['Planning Time'])).toFixed(2),
        `${median(explained.map((e) => buffers(e.Plan)))} (${median(explained.map((e) => e.Plan['Shared Read Blocks'] ?? 0))})`,
        scans[0] === undefined
          ? 'not used'
          : `${median(scans.map((s) => s?.['Actual Rows'] ?? 0))}, ${median(scans.map((s) => (s ? buffers(s) : 0)))}`,
        String(median(claimed.map((c) => c ?? 0))),
      ];
      console.log(`| ${cells.join(' | ')} |`);
    }
  }
  if (values.text) {
    for (const [i, subject] of subjects.entries()) {
      const generic = prepared[i]?.explainers[1];
      if (generic === undefined) continue;
      const text = await generic.text();
      console.log(`\n## ${subject.label}, generic plan\n\n${text}`);
    }
  }
} finally {
  for (const { explainers } of prepared) for (const e of explainers) await e.close();
  for (const subject of subjects) await server.dropDatabase(subject.name);
  await server.stop();
}
