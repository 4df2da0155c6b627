/**
 * Fairness across concurrency keys (R50), same run, alternating:
 * `pnpm exec tsx bench/key-fairness.ts [--keys 1000] [--hot 10000] [--reps 3]`.
 * (Keyed ÷ plain throughput is `pnpm bench --workload w2,w2k`.) Each case drains pre-submitted
 * one-step no-op workflows, each task keyed with limit 1 (w2k's workflow), with one worker
 * (concurrency 10) in its own process, on a fresh database (DATABASE_URL's server, or an
 * embedded one):
 *  - cold: `keys` workflows, one per key;
 *  - hot+cold: the same cold ones, submitted after `hot` workflows of one key.
 * Rates come from the transition log (database time): the cold workflows' count ÷ (the last
 * cold one's end − the first lease of any), beside the hot key ÷ without it.
 */
import { parseArgs } from 'node:util';
import { createEngine } from '@causeway/engine';
import { pino } from 'pino';
import { benchWorkflows, type KeyedInput, keyedName } from './causeway';
import { epochMsSql } from './causeway-log';
import { parallelFor } from './clock';
import { drainWithWorkers, serveWorker } from './script-drain';
import { adminPool, checkpoint, startServer } from './server';
import { median } from './stats';
import { repoRoot } from './versions';

const workflows = benchWorkflows({ onJob() {}, onStep() {}, onWorkflowDone() {} }, true);
const quiet = pino({ level: 'silent' });

// ---- worker process: drains until told to stop ----------------------------------------------
if (process.argv[2] === '--worker') {
  await serveWorker(
    createEngine({ databaseUrl: process.argv[3] as string, workflows, logger: quiet }),
  );
} else {
  await main();
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      keys: { type: 'string', default: '1000' },
      hot: { type: 'string', default: '10000' },
      reps: { type: 'string', default: '3' },
    },
  });
  const keys = Number(values.keys);
  const hot = Number(values.hot);
  const reps = Number(values.reps);
  const server = await startServer(repoRoot);
  const cold = Array.from({ length: keys }, (_, i) => ({ i, key: `cold${i}` }));
  const cases = {
    cold: { first: [], measured: cold },
    'hot+cold': {
      first: Array.from({ length: hot }, (_, i) => ({ i: keys + i, key: 'hot' })),
      measured: cold,
    },
  } satisfies Record<string, { first: KeyedInput[]; measured: KeyedInput[] }>;
  const rates = new Map<string, number[]>();
  for (let rep = 0; rep < reps; rep += 1) {
    const order = Object.keys(cases) as (keyof typeof cases)[];
    for (const name of rep % 2 === 0 ? order : [...order].reverse()) {
      const spec = cases[name];
      const rate = await runCase(server, `bench_keys_${rep}_${name.replace('+', '_')}`, spec);
      rates.set(name, [...(rates.get(name) ?? []), rate]);
      console.log(`rep ${rep} ${name}: ${Math.round(rate)} workflows/s (the cold ones)`);
    }
  }
  const ratios = (rates.get('hot+cold') ?? []).map(
    (value, index) => value / ((rates.get('cold') ?? [])[index] ?? NaN),
  );
  console.log(
    `PostgreSQL ${server.version}, ${keys} cold keys (limit 1), hot ${hot}, ${reps} reps`,
  );
  console.log(
    `cold beside the hot key ÷ cold alone: ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
  );
  await server.stop();
}

/**
 * Submits `first` then `measured` (untimed), drains with one worker process, and returns the
 * rate of the `measured` workflows by the log: their count ÷ (their last end − the first lease).
 */
async function runCase(
  server: Awaited<ReturnType<typeof startServer>>,
  database: string,
  spec: { readonly first: readonly KeyedInput[]; readonly measured: readonly KeyedInput[] },
): Promise<number> {
  const url = await server.createDatabase(database);
  const engine = createEngine({ databaseUrl: url, workflows, logger: quiet });
  await engine.migrate();
  const submit = async (inputs: readonly KeyedInput[]) => {
    const batches = Math.ceil(inputs.length / 500);
    await parallelFor(batches, 4, async (b) => {
      const batch = inputs.slice(b * 500, (b + 1) * 500);
      await engine.submitMany(batch.map((item) => ({ name: keyedName, input: item })));
    });
  };
  await submit(spec.first);
  await submit(spec.measured);
  await engine.close();
  const pool = adminPool(url);
  await pool.query('analyze');
  await checkpoint(pool);
  await drainWithWorkers(pool, new URL(import.meta.url).pathname, ['--worker', url], 1);
  const measuredIds = spec.measured.map((item) => item.i);
  const { rows } = await pool.query<{ first: number; last: number }>(
    `select ${epochMsSql("min(tr.at) filter (where tr.reason = 'lease_acquired')")} as first,
       ${epochMsSql(`max(tr.at) filter (where tr.to_state = 'succeeded' and tr.task_id is not null
         and (w.input->>'i')::int = any($1::int[]))`)} as last
     from causeway_transitions as tr join causeway_workflows as w on w.id = tr.workflow_id`,
    [measuredIds],
  );
  await pool.end();
  await server.dropDatabase(database);
  const span = (rows[0]?.last ?? NaN) - (rows[0]?.first ?? NaN);
  return spec.measured.length / (span / 1000);
}
