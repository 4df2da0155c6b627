/**
 * Where Causeway's time goes: `pnpm exec tsx bench/profile.ts [--workload w1a|w1b|w2|w4|w6]
 * [--n 10000] [--concurrency 10] [--claim-batch B] [--prefetch P]
 * [--lease-ms MS] [--plan-cache-mode M] [--auto-explain-ms MS]`. Runs the submits (w1a, w1b)
 * or one Causeway worker (w2, w4; w6: one step starting n children) in this process, without
 * the benchmark's child processes,
 * and reports
 *  - the transactions it ran (claim, settle, other), with statements and client time per transaction;
 *  - per statement: calls per workflow, client round-trip time, and (embedded server only)
 *    server execution + planning time from pg_stat_statements;
 *  - this process's CPU time per workflow.
 * Client-side numbers come from wrapping pg.Client#query (profiling only; the benchmark itself
 * does not do this). For pg_stat_statements the embedded cluster is started, configured with
 * ALTER SYSTEM and restarted, since the library must be preloaded.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startEmbeddedPostgres } from '../scripts/embedded-postgres';
import { causewaySystem } from './causeway';
import { now, parallelFor, sleep } from './clock';
import { adminPool, checkpoint, startServer, withClient } from './server';
import type { Mode } from './system';
import { repoRoot } from './versions';

const { values } = parseArgs({
  options: {
    workload: { type: 'string', default: 'w2' },
    n: { type: 'string' },
    concurrency: { type: 'string', default: '10' },
    'claim-batch': { type: 'string' },
    prefetch: { type: 'string' },
    'lease-ms': { type: 'string' },
    'plan-cache-mode': { type: 'string' },
    'auto-explain-ms': { type: 'string' },
  },
});
// BENCH_TRACER as in the bench's worker processes (bench/drop-tracer.ts).
if (process.env.BENCH_TRACER === 'drop') (await import('./drop-tracer')).registerDroppingTracer();
if (process.env.BENCH_TRACER === 'context-active')
  (await import('./drop-tracer')).registerActiveContextManager();
const workload = values.workload as 'w1a' | 'w1b' | 'w2' | 'w4' | 'w6';
if (!['w1a', 'w1b', 'w2', 'w4', 'w6'].includes(workload)) {
  throw new Error('--workload w1a|w1b|w2|w4|w6');
}
const mode: Mode = workload === 'w4' ? 'workflow' : 'job';
const n = Number(values.n ?? (mode === 'job' ? 10_000 : 2_000));
const concurrency = Number(values.concurrency);
const prefetch = values.prefetch === undefined ? undefined : Number(values.prefetch);
const leaseMs = values['lease-ms'] === undefined ? undefined : Number(values['lease-ms']);
const claimBatchSize =
  values['claim-batch'] === undefined ? undefined : Number(values['claim-batch']);

// ---- client side: every statement, grouped by transaction -----------------------------------
/** One name per statement for the client and pg_stat_statements alike (literals and lists folded). */
const key = (text: string) =>
  text
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase()
    .replace(/'[^']*'/g, '?')
    .replace(/\$\d+/g, '?')
    .replace(/\(\? \/\*, \.\.\. \*\/\)/g, '(?…)')
    .replace(/\(\?(, \?)*\)/g, '(?…)');
/** The hot prepared statements share a long prefix (the clock CTE): name them by what they do. */
const short = (text: string) => {
  if (!text.startsWith('/* causeway:prepared */')) return text.slice(0, 64);
  if (text.includes('skip locked')) return 'claim (prepared)';
  if (text.includes('insert into causeway_workflows')) return 'submit (prepared)';
  return `prepared: ${text.slice(24, 84)}`;
};
interface Stat {
  calls: number;
  ms: number;
}
const statements = new Map<string, Stat & { rows: number }>();
const transactions = new Map<string, Stat & { statements: number }>();
const openTransactions = new WeakMap<object, { texts: string[]; ms: number }>();
let recording = false;

function transactionKind(statements: readonly string[]): string {
  const has = (part: string) => statements.some((text) => text.includes(part));
  if (has('skip locked')) return 'claim';
  // W6: the step's edge that writes its children; a child's end that moves the parent's tally,
  // and the one that also reads every child's result to settle it.
  if (has('insert into causeway_workflows')) return 'children start';
  if (has('jsonb_object_agg')) return 'child end + parent settle';
  if (has('children_total = v.total')) return 'child end + tally';
  if (statements.some((text) => text.includes('causeway_transitions'))) return 'settle (or sweep)';
  return `other (${(statements[1] ?? statements[0] ?? '').slice(0, 30)}…)`;
}

const originalQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
/** Statements in flight over time, across every connection of this process. */
const overlap = { inFlight: 0, since: 0, area: 0, busyMs: 0 };
function inFlightChange(at: number, delta: number): void {
  if (overlap.inFlight > 0) {
    overlap.area += overlap.inFlight * (at - overlap.since);
    overlap.busyMs += at - overlap.since;
  }
  overlap.inFlight += delta;
  overlap.since = at;
}
(pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (
  this: object,
  ...args: unknown[]
) {
  const config = args[0] as string | { text?: string };
  const full = key(typeof config === 'string' ? config : (config?.text ?? ''));
  const text = short(full);
  const started = now();
  if (!recording) return originalQuery.apply(this, args);
  inFlightChange(started, 1);
  const finish = (result: unknown) => {
    const finished = now();
    inFlightChange(finished, -1);
    const ms = finished - started;
    const stat = statements.get(text) ?? { calls: 0, ms: 0, rows: 0 };
    stat.calls += 1;
    stat.ms += ms;
    stat.rows += (result as { rowCount?: number } | undefined)?.rowCount ?? 0;
    statements.set(text, stat);
    const open = openTransactions.get(this);
    if (text === 'begin') openTransactions.set(this, { texts: [full], ms });
    else if (open !== undefined) {
      open.texts.push(full);
      open.ms += ms;
      if (text === 'commit' || text === 'rollback') {
        const kind = transactionKind(open.texts);
        const tx = transactions.get(kind) ?? { calls: 0, ms: 0, statements: 0 };
        tx.calls += 1;
        tx.ms += open.ms;
        tx.statements += open.texts.length;
        transactions.set(kind, tx);
        openTransactions.delete(this);
      }
    }
  };
  // pg.Pool#query calls the client with a callback (the engine's hot statements go that way).
  const callback = args[args.length - 1];
  if (typeof callback === 'function') {
    args[args.length - 1] = (error: unknown, result: unknown) => {
      finish(result);
      callback(error, result);
    };
    return originalQuery.apply(this, args);
  }
  const result = originalQuery.apply(this, args) as Promise<unknown> | undefined;
  if (typeof result?.then !== 'function') return result;
  result.then(finish, () => finish(undefined));
  return result;
};

// ---- server: embedded with pg_stat_statements, or DATABASE_URL (client side only) -----------
let dataDir: string | null = null;
const server = await startServer(repoRoot, async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'causeway-bench-profile-'));
  const first = await startEmbeddedPostgres({ repoRoot, dataDir, label: '[profile]' });
  await withClient(first.url, async (client) => {
    await client.query(`alter system set shared_preload_libraries = 'pg_stat_statements'`);
    await client.query('alter system set pg_stat_statements.track_planning = on');
    const planCacheMode = values['plan-cache-mode'];
    const explainMs = values['auto-explain-ms'];
    if (explainMs !== undefined) {
      // Plans of statements slower than this, with their timings, on stderr (the server's log).
      await client.query(`alter system set session_preload_libraries = 'auto_explain'`);
      await client.query(`alter system set auto_explain.log_min_duration = ${Number(explainMs)}`);
      await client.query('alter system set auto_explain.log_analyze = on');
      await client.query('alter system set auto_explain.log_buffers = on');
    }
    if (planCacheMode !== undefined) {
      await client.query(
        `alter system set plan_cache_mode = '${planCacheMode.replace(/\W/g, '')}'`,
      );
    }
  });
  await first.stop();
  return startEmbeddedPostgres({
    repoRoot,
    dataDir,
    label: '[profile]',
    echoLogs: values['auto-explain-ms'] !== undefined,
  });
});
const withServerStats = server.kind === 'embedded';
const dbName = 'bench_cw_profile';
const url = await server.createDatabase(dbName);
const pool = adminPool(url);
try {
  const system = causewaySystem({
    kind: 'causeway',
    concurrency,
    claimBatchSize,
    prefetch,
    ...(leaseMs === undefined ? {} : { leaseMs }),
  });
  await system.setup(url);
  const submitting = workload === 'w1a' || workload === 'w1b';
  const producer = await system.producer(url, submitting ? 10 : 4, mode);
  const batches = (count: number) =>
    Array.from({ length: Math.ceil(count / 1000) }, (_, chunk) =>
      Array.from({ length: Math.min(1000, count - chunk * 1000) }, (_, j) => ({
        i: chunk * 1000 + j,
      })),
    );
  let parentId: string | null = null;
  if (submitting) {
    await parallelFor(10, 10, (i) => producer.submit({ i: -1 - i, warm: true }));
  } else if (workload === 'w6') {
    parentId = (await producer.submitFanOut?.(n)) ?? null;
    await producer.close();
  } else {
    await parallelFor(Math.ceil(n / 1000), 4, (chunk) =>
      producer.submitBatch(batches(n)[chunk] ?? []),
    );
    await producer.close();
  }
  // w6: no ANALYZE of tables that hold one workflow (see workloads/fan-out.ts).
  if (workload !== 'w6') await pool.query('analyze');
  if (withServerStats) {
    await pool.query('create extension if not exists pg_stat_statements');
    await pool.query('select pg_stat_statements_reset()');
  }
  await checkpoint(pool);

  let handled = 0;
  const worker = submitting
    ? null
    : await system.worker(url, mode, {
        onJob: () => {
          handled += 1;
        },
        onStep: () => {},
        onWorkflowDone: () => {
          handled += 1;
        },
      });
  // w6: the drain of the children only, from once the step's transaction has committed them.
  if (parentId !== null) {
    await worker?.start();
    while (!(await childrenStarted(pool, parentId))) await sleep(1);
  }
  await pool.query('select pg_stat_reset()');
  recording = true;
  const cpuBefore = process.cpuUsage();
  const started = now();
  if (workload === 'w1a') {
    await parallelFor(n, 10, (i) => producer.submit({ i }));
  } else if (workload === 'w1b') {
    for (const batch of batches(n)) await producer.submitBatch(batch);
  } else {
    if (parentId === null) await worker?.start();
    while (handled < n) await sleep(2);
    while ((await system.counts(pool, mode)).done < n) await sleep(5);
    while (parentId !== null && !(await workflowSucceeded(pool, parentId))) await sleep(5);
  }
  const elapsedMs = now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  recording = false;
  await worker?.stop();
  if (submitting) await producer.close();

  const server = new Map<string, { calls: number; execMs: number; planMs: number; rows: number }>();
  if (withServerStats) {
    const { rows } = await pool.query(
      `select query, calls, total_exec_time, total_plan_time, rows from pg_stat_statements
        where dbid = (select oid from pg_database where datname = current_database())`,
    );
    for (const row of rows) {
      const k = short(key(row.query));
      const entry = server.get(k) ?? { calls: 0, execMs: 0, planMs: 0, rows: 0 };
      entry.calls += Number(row.calls);
      entry.execMs += row.total_exec_time;
      entry.planMs += row.total_plan_time;
      entry.rows += Number(row.rows);
      server.set(k, entry);
    }
  }

  const f = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : '–');
  const out: string[] = [];
  out.push(
    `${workload} profile: ${n} ${mode === 'job' ? 'one-step' : 'three-step'} workflows${workload === 'w6' ? ', children of one step (their drain, after the step committed them)' : ''}, ` +
      (submitting
        ? `${workload === 'w1a' ? '10 producers, engine.submit()' : 'engine.submitMany() × 1,000'}; `
        : `1 in-process worker, concurrency ${concurrency}, claimBatchSize ${claimBatchSize ?? 'default'}, prefetch ${prefetch ?? 'default'}; `) +
      `PostgreSQL ${server.size > 0 ? '(pg_stat_statements on) ' : ''}${withServerStats ? 'embedded' : 'DATABASE_URL'}`,
    '',
    `- ${f(n / (elapsedMs / 1000), 0)} workflows/s (${f(elapsedMs, 0)} ms)`,
    `- statements in flight: ${f(overlap.area / elapsedMs)} on average; at least one ${f((overlap.busyMs / elapsedMs) * 100, 0)}% of the time`,
    `- this process's CPU (user ${f(cpu.user / n, 0)} µs, system ${f(cpu.system / n, 0)} µs per workflow): ${f((cpu.user + cpu.system) / 1000, 0)} ms = ${f((cpu.user + cpu.system) / n, 0)} µs per workflow (${f(((cpu.user + cpu.system) / 1000 / elapsedMs) * 100, 0)}% of one core)`,
    '',
    '| transaction | count | per workflow | statements per tx | client ms per tx |',
    '|---|---|---|---|---|',
  );
  for (const [kind, tx] of [...transactions].sort((a, b) => b[1].ms - a[1].ms)) {
    out.push(
      `| ${kind} | ${tx.calls} | ${f(tx.calls / n, 3)} | ${f(tx.statements / tx.calls, 1)} | ${f(tx.ms / tx.calls)} |`,
    );
  }
  out.push(
    '',
    '| statement | calls per workflow | rows per call | client ms per call | server exec ms per call | server plan ms per call | client ms total | server ms total |',
    '|---|---|---|---|---|---|---|---|',
  );
  let clientTotal = 0;
  let serverTotal = 0;
  for (const [text, stat] of [...statements].sort((a, b) => b[1].ms - a[1].ms)) {
    const s = server.get(text);
    clientTotal += stat.ms;
    serverTotal += s === undefined ? 0 : s.execMs + s.planMs;
    out.push(
      `| \`${text}\` | ${f(stat.calls / n, 3)} | ${f(stat.rows / stat.calls, 1)} | ${f(stat.ms / stat.calls, 3)} | ${s ? f(s.execMs / s.calls, 3) : '–'} | ${s ? f(s.planMs / s.calls, 3) : '–'} | ${f(stat.ms, 0)} | ${s ? f(s.execMs + s.planMs, 0) : '–'} |`,
    );
  }
  out.push(
    '',
    `Total: client ${f(clientTotal, 0)} ms, server exec+plan ${withServerStats ? f(serverTotal, 0) : '–'} ms, over ${f(elapsedMs, 0)} ms wall.`,
  );
  if (withServerStats) {
    // Server time per statement as pg_stat_statements has it, whatever the client-side key.
    const { rows: top } = await pool.query(
      `select regexp_replace(query, '/\\*.*?\\*/|\\s+', ' ', 'g') as query, calls, total_exec_time,
              total_plan_time, rows
         from pg_stat_statements
        where dbid = (select oid from pg_database where datname = current_database())
        order by total_exec_time + total_plan_time desc limit 8`,
    );
    out.push(
      '',
      '| server statement | calls | exec ms per call | plan ms per call | rows per call |',
    );
    out.push('|---|---|---|---|---|');
    for (const row of top) {
      const calls = Number(row.calls);
      out.push(
        `| \`${String(row.query).trim().slice(0, 90)}\` | ${calls} | ${f(row.total_exec_time / calls, 3)} | ${f(row.total_plan_time / calls, 3)} | ${f(Number(row.rows) / calls, 1)} |`,
      );
    }
  }
  out.push('', ...(await tableWrites(pool, n)));
  console.log(out.join('\n'));
} finally {
  await pool.end();
  await server.dropDatabase(dbName);
  await server.stop();
  if (dataDir !== null) await rm(dataDir, { recursive: true, force: true });
}

/**
 * Row writes per workflow by table since the profile's reset, HOT updates apart (an update
 * that is not HOT writes an entry into every index): counts, so a busy machine does not blur
 * them. Read once the worker's connections have closed and flushed their statistics.
 */
async function tableWrites(pool: pg.Pool, n: number): Promise<string[]> {
  await sleep(1_000);
  await pool.query('select pg_stat_clear_snapshot()');
  const { rows } = await pool.query(
    `select relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del from pg_stat_user_tables
      where relname in ('causeway_workflows', 'causeway_tasks') or relname like 'causeway_transitions%'
      order by relname`,
  );
  const f = (count: unknown) => (Number(count) / n).toFixed(2);
  return [
    '| table | inserts per workflow | updates | of them HOT | deletes |',
    '|---|---|---|---|---|',
    ...rows
      .filter((row) => Number(row.n_tup_ins) + Number(row.n_tup_upd) > 0)
      .map(
        (row) =>
          `| ${row.relname} | ${f(row.n_tup_ins)} | ${f(row.n_tup_upd)} | ${f(row.n_tup_hot_upd)} | ${f(row.n_tup_del)} |`,
      ),
  ];
}

/** Whether the parent's step has committed its children (its tally has them). */
async function childrenStarted(pool: pg.Pool, parentId: string): Promise<boolean> {
  const { rows } = await pool.query(
    'select children_total from causeway_tasks where workflow_id = $1',
    [parentId],
  );
  return Number(rows[0]?.children_total ?? 0) > 0;
}

async function workflowSucceeded(pool: pg.Pool, id: string): Promise<boolean> {
  const { rows } = await pool.query('select state from causeway_workflows where id = $1', [id]);
  return rows[0]?.state === 'succeeded';
}
