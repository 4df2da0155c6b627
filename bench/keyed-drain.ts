/**
 * Concurrency keys (R50) against plain work, same run, alternating:
 * `pnpm exec tsx bench/keyed-drain.ts [--n 10000] [--keys 1000] [--hot 10000] [--reps 3]`.
 * Each case drains pre-submitted one-step no-op workflows with one worker (concurrency 10) in
 * its own process, on a fresh database (DATABASE_URL's server, or an embedded one):
 *  - plain: N workflows, no key;
 *  - keyed: N workflows, every task keyed, `keys` keys with limit 1;
 *  - cold: `keys` workflows, one per key (limit 1);
 *  - hot+cold: the same cold ones, submitted after `hot` workflows of one key (limit 1).
 * Rates come from the transition log (first lease to last end, database time): keyed ÷ plain,
 * and the cold workflows' drain beside the hot key ÷ without it.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import { createEngine } from '@causeway/engine';
import { defineWorkflow, step } from '@causeway/workflow';
import { pino } from 'pino';
import { z } from 'zod';
import { epochMsSql } from './causeway-log';
import { parallelFor } from './clock';
import { adminPool, checkpoint, startServer } from './server';
import { median } from './stats';
import { repoRoot } from './versions';

const input = z.object({ i: z.number().int(), key: z.string().nullable() });
type Input = z.output<typeof input>;
/** The workflows of every case: the step is keyed only when the input names a key. */
const plain = defineWorkflow({
  name: 'bench-plain',
  input,
  steps: { only: step({ run: () => null }) },
});
const keyed = defineWorkflow({
  name: 'bench-keyed',
  input,
  steps: {
    only: step<Input>({
      concurrency: { key: (ctx) => ctx.input.key ?? 'none', limit: 1 },
      run: () => null,
    }),
  },
});
const workflows = [plain, keyed];
const quiet = pino({ level: 'silent' });

// ---- worker process: drains until told to stop ----------------------------------------------
if (process.argv[2] === '--worker') {
  const engine = createEngine({ databaseUrl: process.argv[3] as string, workflows, logger: quiet });
  const handle = await engine.startWorker({ concurrency: 10 });
  process.send?.('ready');
  process.on('message', async () => {
    await handle.stop({ drainMs: 1_000 });
    await engine.close();
    process.exit(0);
  });
} else {
  await main();
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      n: { type: 'string', default: '10000' },
      keys: { type: 'string', default: '1000' },
      hot: { type: 'string', default: '10000' },
      reps: { type: 'string', default: '3' },
    },
  });
  const n = Number(values.n);
  const keys = Number(values.keys);
  const hot = Number(values.hot);
  const reps = Number(values.reps);
  const server = await startServer(repoRoot);
  const cases = {
    plain: { first: [], measured: Array.from({ length: n }, (_, i) => ({ i, key: null })) },
    keyed: {
      first: [],
      measured: Array.from({ length: n }, (_, i) => ({ i, key: `k${i % keys}` })),
    },
    cold: { first: [], measured: Array.from({ length: keys }, (_, i) => ({ i, key: `cold${i}` })) },
    'hot+cold': {
      first: Array.from({ length: hot }, (_, i) => ({ i: keys + i, key: 'hot' })),
      measured: Array.from({ length: keys }, (_, i) => ({ i, key: `cold${i}` })),
    },
  } satisfies Record<string, { first: Input[]; measured: Input[] }>;
  const rates = new Map<string, number[]>();
  for (let rep = 0; rep < reps; rep += 1) {
    const order = (process.env.CASES?.split(',') ?? Object.keys(cases)) as (keyof typeof cases)[];
    for (const name of rep % 2 === 0 ? order : [...order].reverse()) {
      const spec = cases[name];
      const rate = await runCase(server, `bench_keys_${rep}_${name.replace('+', '_')}`, spec);
      rates.set(name, [...(rates.get(name) ?? []), rate]);
      console.log(`rep ${rep} ${name}: ${Math.round(rate)} workflows/s (the measured ones)`);
    }
  }
  const ratio = (a: string, b: string) =>
    (rates.get(a) ?? []).map((value, index) => value / ((rates.get(b) ?? [])[index] ?? NaN));
  const show = (values: number[]) =>
    `${median(values).toFixed(2)} (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`;
  console.log(
    `PostgreSQL ${server.version}, N ${n}, ${keys} keys (limit 1), hot ${hot}, ${reps} reps`,
  );
  console.log(`keyed ÷ plain: ${show(ratio('keyed', 'plain'))}`);
  console.log(`cold beside the hot key ÷ cold alone: ${show(ratio('hot+cold', 'cold'))}`);
  await server.stop();
}

/**
 * Submits `first` then `measured` (untimed), drains with one worker process, and returns the
 * rate of the `measured` workflows by the log: their count ÷ (their last end − the first lease).
 */
async function runCase(
  server: Awaited<ReturnType<typeof startServer>>,
  database: string,
  spec: { readonly first: readonly Input[]; readonly measured: readonly Input[] },
): Promise<number> {
  const url = await server.createDatabase(database);
  const engine = createEngine({ databaseUrl: url, workflows, logger: quiet });
  await engine.migrate();
  const submit = async (inputs: readonly Input[]) => {
    const batches = Math.ceil(inputs.length / 500);
    await parallelFor(batches, 4, async (b) => {
      const batch = inputs.slice(b * 500, (b + 1) * 500);
      await engine.submitMany(
        batch.map((item) => ({ name: item.key === null ? plain.name : keyed.name, input: item })),
      );
    });
  };
  await submit(spec.first);
  await submit(spec.measured);
  await engine.close();
  const pool = adminPool(url);
  await pool.query('analyze');
  await checkpoint(pool);
  const worker: ChildProcess = fork(new URL(import.meta.url).pathname, ['--worker', url], {
    execArgv: ['--import', 'tsx'],
    stdio: 'inherit',
  });
  await new Promise((resolve) => worker.once('message', resolve));
  const measured = spec.measured.length;
  const lastIds = spec.measured.map((item) => item.i);
  for (;;) {
    const { rows } = await pool.query<{ open: number }>(
      `select count(*)::int as open from causeway_workflows where state <> 'succeeded'`,
    );
    if ((rows[0]?.open ?? 1) === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  worker.send('stop');
  await new Promise((resolve) => worker.once('exit', resolve));
  const { rows } = await pool.query<{ first: number; last: number }>(
    `select ${epochMsSql("min(tr.at) filter (where tr.reason = 'lease_acquired')")} as first,
       ${epochMsSql(`max(tr.at) filter (where tr.to_state = 'succeeded' and tr.task_id is not null
         and (w.input->>'i')::int = any($1::int[]))`)} as last
     from causeway_transitions as tr join causeway_workflows as w on w.id = tr.workflow_id`,
    [lastIds],
  );
  await pool.end();
  await server.dropDatabase(database);
  const span = (rows[0]?.last ?? NaN) - (rows[0]?.first ?? NaN);
  return measured / (span / 1000);
}
