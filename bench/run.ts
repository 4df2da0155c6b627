/**
 * Causeway's benchmark: `pnpm bench [--workload w2 --reps 3 ...]` (see options.ts or --help).
 * Runs every selected workload for Causeway and for the raw SQL floor (L) of the peers'
 * harness (and, with `--systems ...,spec`, S, the contract floor: the writes docs/rules.md
 * requires, in raw SQL), repetition by repetition (interleaved), each run in its own fresh
 * database, then prints markdown tables and writes one JSON line per run to
 * bench/results/<stamp>.json.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { type PgBouncer, startPgBouncer } from '../scripts/pgbouncer';
import { loadSystem } from './load-system';
import { type BenchOptions, parseOptions, usage } from './options';
import type { RunRecord } from './record';
import { formatReport } from './report';
import { adminPool, type BenchServer, startServer } from './server';
import type { SystemName, SystemSpec } from './system';
import { engineRevision, repoRoot, sourceDigest } from './versions';
import { type Workload, type WorkloadId, workloads } from './workloads';

interface Case {
  readonly workload: Workload;
  readonly procs: number | undefined;
  /** w2d: delayed workflows as a multiple of N. */
  readonly delayedFactor: number;
  /**
   * `--pgbouncer`: Causeway direct with prepared statements off (`unprepared`), or through
   * PgBouncer (`pooled`, prepared statements off too), beside the usual `direct`.
   */
  readonly connection: Connection;
  readonly name: string;
}

type Connection = 'direct' | 'unprepared' | 'pooled';
const connectionSuffix: Readonly<Record<Connection, string>> = {
  direct: '',
  unprepared: ' unprepared',
  pooled: ' via PgBouncer',
};

function planCases(options: BenchOptions): Case[] {
  return options.workloads.flatMap((id: WorkloadId): Case[] => {
    const workload = workloads[id];
    if (id === 'w5') {
      return [
        {
          workload,
          procs: undefined,
          delayedFactor: 0,
          connection: 'direct',
          name: `w5 ${options.engines} engines`,
        },
      ];
    }
    if (!workload.usesProcs) {
      return [{ workload, procs: undefined, delayedFactor: 0, connection: 'direct', name: id }];
    }
    const procs = ['w2', 'w2k', 'w6'].includes(id) ? options.procs : options.procs.slice(0, 1);
    const factors = id === 'w2d' ? options.delayed : [0];
    const connections: Connection[] =
      id === 'w2' && options.pgbouncer > 0 ? ['direct', 'unprepared', 'pooled'] : ['direct'];
    return procs.flatMap((p) =>
      factors.flatMap((f) =>
        connections.map((connection) => ({
          workload,
          procs: p,
          delayedFactor: f,
          connection,
          name: `${id} ${p}×${options.concurrency}${id === 'w2d' ? ` +${f}N delayed` : ''}${connectionSuffix[connection]}`,
        })),
      ),
    );
  });
}

/** The cases of a repetition: w2d's delayed cases in reverse every other one, so drift hits each alike. */
function casesForRep(cases: readonly Case[], rep: number): readonly Case[] {
  if (rep % 2 === 1) return cases;
  const reversed = cases.filter((c) => c.workload.id === 'w2d').reverse();
  let next = 0;
  return cases.map((c) => (c.workload.id === 'w2d' ? (reversed[next++] as Case) : c));
}

async function runOne(
  server: BenchServer,
  pooler: PgBouncer | null,
  options: BenchOptions,
  item: Case,
  system: SystemName,
  rep: number,
  stamp: string,
): Promise<RunRecord> {
  const { workload } = item;
  // S runs with L's knobs (k, loops, notify, idle poll), so the two differ only in the writes.
  const pooled = item.connection === 'pooled' && pooler !== null;
  const connection =
    item.connection === 'direct'
      ? {}
      : { preparedStatements: false, ...(pooled ? { poolerPort: pooler.port } : {}) };
  const keys = workload.id === 'w2k' ? { keys: options.keys } : {};
  const spec: SystemSpec =
    system === 'causeway'
      ? {
          kind: 'causeway',
          concurrency: options.concurrency,
          ...options.causeway,
          ...connection,
          ...keys,
        }
      : system === 'spec'
        ? { ...workload.floor(options.concurrency), kind: 'spec' }
        : workload.floor(options.concurrency);
  const target = await loadSystem(spec);
  const n = options.n ?? Math.max(1, Math.round(workload.defaultN * options.scale));
  const history = workload.id === 'w2h' ? options.history : 0;
  const delayed = n * item.delayedFactor;
  const dbName = `bench_cw_${system}_${workload.id}_p${item.procs ?? 0}${workload.id === 'w2d' ? `_d${item.delayedFactor}` : ''}${item.connection === 'direct' ? '' : `_${item.connection}`}_r${rep}`;
  const base = {
    stamp,
    date: new Date().toISOString(),
    system,
    label: system === 'floor' ? workload.floorLabel : target.label,
    version: target.version,
    config: target.config,
    workload: workload.id,
    case: item.name,
    rep,
    n,
    procs: item.procs,
    concurrency: options.concurrency,
    history: history > 0 ? history : undefined,
    delayed: workload.id === 'w2d' ? delayed : undefined,
    keys: workload.id === 'w2k' ? options.keys : undefined,
    engines: workload.id === 'w5' ? options.engines : undefined,
    connection: item.connection,
    pgbouncer: pooled ? options.pgbouncer : undefined,
    server: { kind: server.kind, version: server.version, settings: server.settings },
    cpus: os.cpus().length,
    loadavgBefore: os.loadavg().map((x) => Math.round(x * 100) / 100),
    node: process.version,
  };
  const url = await server.createDatabase(dbName);
  const pool = adminPool(url);
  try {
    await target.setup(url);
    const measured = await workload.run({
      system: target,
      spec,
      url,
      pool,
      n,
      producers: options.producers,
      batch: options.batch,
      procs: item.procs ?? 1,
      intervalMs: options.intervalMs,
      history,
      delayed,
      engines: options.engines,
      minutes: options.minutes,
      timeoutMs: options.timeoutMs,
      poolerPid: pooled ? pooler.pid : null,
    });
    return { ...base, ...measured };
  } catch (error) {
    return {
      ...base,
      verified: false,
      problems: [],
      error: String(error instanceof Error ? (error.stack ?? error.message) : error),
    };
  } finally {
    await pool.end();
    await server.dropDatabase(dbName);
  }
}

function describe(record: RunRecord): string {
  const head = `[${record.case} ${record.system} r${record.rep}]`;
  if (record.error !== undefined) return `${head} ERROR ${record.error}`;
  const rounded = (x: number) => (Math.abs(x) >= 100 ? String(Math.round(x)) : x.toPrecision(3));
  const value =
    record.latency === undefined
      ? `${rounded(record.value ?? Number.NaN)} ${record.metric}`
      : `p50 ${record.latency.p50.toFixed(2)} ms, p99 ${record.latency.p99.toFixed(2)} ms`;
  return `${head} ${value}${record.verified ? '' : ` NOT VERIFIED: ${record.problems.join('; ')}`}`;
}

async function main(): Promise<void> {
  let options: BenchOptions;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${usage}`);
    process.exit(2);
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const out = options.out ?? join(repoRoot, 'bench', 'results', `${stamp}.json`);
  mkdirSync(dirname(out), { recursive: true });
  // Ctrl-C: exit through 'exit', where the embedded server is killed.
  process.on('SIGINT', () => process.exit(130));
  const revision = engineRevision();
  const server = await startServer(repoRoot);
  const pooler =
    options.pgbouncer > 0
      ? await startPgBouncer({ serverUrl: server.adminUrl, poolSize: options.pgbouncer })
      : null;
  const cases = planCases(options);
  process.stderr.write(
    `bench: ${cases.map((c) => c.name).join(', ')}; ${options.reps} rep(s); ` +
      `PostgreSQL ${server.version} (${server.kind}); out ${out}\n`,
  );
  const records: RunRecord[] = [];
  try {
    for (let rep = 1; rep <= options.reps; rep++) {
      for (const item of casesForRep(cases, rep)) {
        // Alternate which system goes first, so drift over a repetition hits both alike.
        const order = rep % 2 === 1 ? options.systems : [...options.systems].reverse();
        for (const system of order) {
          const causewayOnly = item.workload.causewayOnly || item.connection !== 'direct';
          if (causewayOnly && system !== 'causeway') continue;
          const record = await runOne(server, pooler, options, item, system, rep, stamp);
          appendFileSync(out, `${JSON.stringify(record)}\n`);
          records.push(record);
          process.stderr.write(`${describe(record)}\n`);
        }
      }
    }
  } finally {
    await pooler?.stop();
    await server.stop();
  }
  let report = formatReport(records);
  if (!revision.endsWith(sourceDigest())) {
    // Worker processes load the engine afresh, this process did so once: the runs mixed code.
    report += `\n\n**Warning: the engine's source changed during this run** (started at ${revision}, now ${sourceDigest()}); the numbers mix versions. Benchmark a tree nobody is editing.`;
  }
  writeFileSync(out.replace(/\.json$/, '.md'), `${report}\n`);
  console.log(report);
  if (records.some((record) => !record.verified)) process.exitCode = 1;
}

await main();
