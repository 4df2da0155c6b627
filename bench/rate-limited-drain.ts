/**
 * A rate-limited queue (R51) drained as fast as its limit allows:
 * `pnpm exec tsx bench/rate-limited-drain.ts [--n 6000] [--limit 500] [--period 1000]
 * [--keys 1] [--workers 2] [--reps 3]`. N one-step no-op workflows whose step spends a limit
 * of `limit` per `period` ms, spread over `keys` keys, drained by worker processes
 * (concurrency 10 each) on a fresh database (DATABASE_URL's server, or an embedded one). From
 * the transition log, on database time: the rate of grants after the first period's (its
 * burst), against the limit's rate, and the most any window of the period held (never above
 * the limit).
 */
import { parseArgs } from 'node:util';
import { createEngine } from '@causeway/engine';
import { defineWorkflow, rateLimit, step } from '@causeway/workflow';
import { pino } from 'pino';
import { z } from 'zod';
import { epochMsSql } from './causeway-log';
import { parallelFor } from './clock';
import { drainWithWorkers, serveWorker } from './script-drain';
import { adminPool, checkpoint, startServer } from './server';
import { median } from './stats';
import { repoRoot } from './versions';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => !arg.startsWith('postgres')),
  options: {
    worker: { type: 'boolean', default: false },
    n: { type: 'string', default: '6000' },
    limit: { type: 'string', default: '500' },
    period: { type: 'string', default: '1000' },
    keys: { type: 'string', default: '1' },
    workers: { type: 'string', default: '2' },
    reps: { type: 'string', default: '3' },
  },
});
const limit = Number(values.limit);
const periodMs = Number(values.period);
const input = z.object({ i: z.number().int(), key: z.string() });
type Input = z.output<typeof input>;
const posts = rateLimit({ name: 'bench-posts', limit, periodMs });
const rated = defineWorkflow({
  name: 'bench-rated',
  input,
  steps: {
    only: step<Input>({
      rateLimit: { name: posts.name, key: (ctx) => ctx.input.key },
      run: () => null,
    }),
  },
});
const quiet = pino({ level: 'silent' });

if (values.worker) {
  const url = process.argv.find((arg) => arg.startsWith('postgres')) as string;
  await serveWorker(
    createEngine({ databaseUrl: url, workflows: [rated], rateLimits: [posts], logger: quiet }),
  );
} else {
  await main();
}

async function main(): Promise<void> {
  const n = Number(values.n);
  const keys = Number(values.keys);
  const workers = Number(values.workers);
  const reps = Number(values.reps);
  const server = await startServer(repoRoot);
  const ratios: number[] = [];
  const peaks: number[] = [];
  for (let rep = 0; rep < reps; rep += 1) {
    const database = `bench_rate_${rep}`;
    const url = await server.createDatabase(database);
    const engine = createEngine({
      databaseUrl: url,
      workflows: [rated],
      rateLimits: [posts],
      logger: quiet,
    });
    await engine.migrate();
    const inputs = Array.from({ length: n }, (_, i) => ({ i, key: `k${i % keys}` }));
    await parallelFor(Math.ceil(n / 500), 4, async (b) => {
      await engine.submitMany(
        inputs.slice(b * 500, (b + 1) * 500).map((item) => ({ name: rated.name, input: item })),
      );
    });
    await engine.close();
    const pool = adminPool(url);
    await pool.query('analyze');
    await checkpoint(pool);
    await drainWithWorkers(
      pool,
      new URL(import.meta.url).pathname,
      ['--worker', url, '--limit', String(limit), '--period', String(periodMs)],
      workers,
      200,
    );
    // Per key: grants after its first period (the burst a fresh window allows), over the time
    // from the end of that period to its last grant; and the most grants in any period.
    const { rows } = await pool.query<{ rate: number; peak: number }>(
      `with lease as (
         select t.rate_key as key, l.at from causeway_transitions as l
         join causeway_tasks as t on t.id = l.task_id where l.reason = 'lease_acquired'
       ),
       per_key as (
         select key, min(at) as first, max(at) as last from lease group by key
       )
       select (
           select avg(n::float8 / span_ms * 1000) from (
             select count(*) filter (where l.at >= k.first + $1 * interval '1 millisecond') as n,
               ${epochMsSql('max(l.at)')} - ${epochMsSql('min(k.first)')} - $1 as span_ms
             from lease as l join per_key as k on k.key = l.key group by k.key
           ) as s
         ) as rate,
         (select max(c)::int from (
           select count(*) over (partition by key order by at
             range between $1 * interval '1 millisecond' - interval '1 microsecond' preceding
             and current row) as c
           from lease) as w) as peak`,
      [periodMs],
    );
    await pool.end();
    await server.dropDatabase(database);
    const rate = rows[0]?.rate ?? Number.NaN;
    const ratio = rate / (limit / (periodMs / 1_000));
    ratios.push(ratio);
    peaks.push(rows[0]?.peak ?? Number.NaN);
    console.log(
      `rep ${rep}: ${Math.round(rate)} grants/s per key after its first period (${keys} key(s)), ` +
        `${ratio.toFixed(3)}× the limit; most in any period ${rows[0]?.peak} (limit ${limit})`,
    );
  }
  console.log(
    `PostgreSQL ${server.version}, N ${n}, ${limit} per ${periodMs} ms, ${keys} key(s), ` +
      `${workers} worker processes, ${reps} reps: ${median(ratios).toFixed(3)}× the limit ` +
      `(${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}), most in a period ${Math.max(...peaks)}`,
  );
  await server.stop();
}
