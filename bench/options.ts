import { parseArgs } from 'node:util';
import { type SystemName, systemNames } from './system';
import { defaultWorkloadIds, type WorkloadId, workloadIds } from './workloads';

export interface BenchOptions {
  readonly workloads: readonly WorkloadId[];
  readonly reps: number;
  readonly scale: number;
  /** Overrides every selected workload's N. */
  readonly n: number | undefined;
  /** Worker processes for W2, W2k and W6 (each value is its own case); W2h, W2d and W4 use the first. */
  readonly procs: readonly number[];
  readonly concurrency: number;
  readonly producers: number;
  readonly batch: number;
  readonly intervalMs: number;
  readonly history: number;
  /** W2d: delayed workflows as multiples of N, each value its own case. */
  readonly delayed: readonly number[];
  /** W2k: concurrency keys (limit 1 each) the tasks are spread over. */
  readonly keys: number;
  /** W5: engine processes, and real minutes (ticks) measured. */
  readonly engines: number;
  readonly minutes: number;
  readonly timeoutMs: number;
  readonly systems: readonly SystemName[];
  readonly causeway: {
    readonly claimBatchSize?: number;
    readonly prefetch?: number;
    readonly poolSize?: number;
    readonly pollIntervalMs?: number;
    readonly leaseMs?: number;
  };
  /** Also run every W2 case unprepared and through PgBouncer (transaction mode) with this many server connections; 0: not. */
  readonly pgbouncer: number;
  readonly out: string | undefined;
}

export const usage = `Usage: pnpm bench [options]

  --workload w1a|w1b|w2|w2k|w2h|w2d|w3|w4|w5|w6|all   comma-separated (default all: all but w5)
                      w2k: W2 with every task keyed (R50), --keys keys of limit 1 (Causeway
                      only): workflows/s and keyed ÷ plain, paired with w2's same run and procs
                      w2d: W2 beside delayed workflows (delayMs 1 day, queued in the same queue)
                      w6: one step starts N one-step child workflows: its commit, their drain,
                      the parent's settle, lock waits (Causeway only; with w2 for the ratios)
                      w5: N cron schedules '* * * * *' in --engines processes for --minutes real
                      minutes (opt-in, Causeway only, ~5 min a run): CPU per minute, lateness
  --reps R            repetitions, interleaved: every workload once, then again (default 3)
  --n N               N for every selected workload (default: w1, w2* 20000, w3 500, w4 2000;
                      w5: schedules, 1000; w6: children, 10000)
  --scale S           multiply the default N and the w2h history by S (default 1)
  --procs 1,2         worker processes for w2, w2k, w6 (default 1,2; w2h, w2d, w4 use the first)
  --concurrency C     worker concurrency (default 10)
  --history H         finished workflows already in the tables for w2h (default 200000)
  --delayed 0,1,10    w2d: delayed workflows as multiples of N, each value its own case
  --keys K            w2k: concurrency keys, limit 1 each, input i on key i mod K (default 1000)
  --engines E         w5: engine processes, each with every schedule and one worker (default 2)
  --minutes K         w5: minute ticks measured, each inside its own whole minute (default 3)
  --quick             smoke check: --scale 0.05 --reps 1
  --systems causeway,floor,spec   what to run (default causeway,floor); floor is L (the
                      peers' raw SKIP LOCKED queue), spec is S (the writes docs/rules.md requires,
                      in hand-written SQL, perfectly batched)
  Causeway tuning (public engine options; defaults are the engine's):
  --claim-batch B  --prefetch P  --pool-size P  --poll-ms MS  --lease-ms MS
  --pgbouncer C       also run each w2 case (Causeway) with prepared statements off, and through
                      Debian's PgBouncer in transaction mode (started here, /usr/sbin/pgbouncer)
                      with C server connections (default_pool_size), prepared statements off,
                      LISTEN and migrations to the server
  --out FILE          JSON lines (default bench/results/<stamp>.json)
  --timeout-s S       per run (default 300)

  DATABASE_URL=...    use that server instead of a throwaway embedded PostgreSQL`;

export function parseOptions(argv: readonly string[]): BenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      workload: { type: 'string', default: 'all' },
      reps: { type: 'string' },
      n: { type: 'string' },
      scale: { type: 'string' },
      procs: { type: 'string', default: '1,2' },
      concurrency: { type: 'string', default: '10' },
      producers: { type: 'string', default: '10' },
      batch: { type: 'string', default: '1000' },
      'interval-ms': { type: 'string', default: '10' },
      history: { type: 'string', default: '200000' },
      delayed: { type: 'string', default: '0,1,10' },
      keys: { type: 'string', default: '1000' },
      engines: { type: 'string', default: '2' },
      minutes: { type: 'string', default: '3' },
      'timeout-s': { type: 'string', default: '300' },
      systems: { type: 'string', default: 'causeway,floor' },
      'claim-batch': { type: 'string' },
      prefetch: { type: 'string' },
      'pool-size': { type: 'string' },
      'poll-ms': { type: 'string' },
      'lease-ms': { type: 'string' },
      quick: { type: 'boolean', default: false },
      pgbouncer: { type: 'string', default: '0' },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const int = (name: string, text: string | undefined): number | undefined => {
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} must be an integer`);
    return value;
  };
  const list = (text: string) => text.split(',').map((item) => item.trim());
  const selected = values.workload === 'all' ? [...defaultWorkloadIds] : list(values.workload);
  for (const id of selected) {
    if (!(workloadIds as readonly string[]).includes(id)) throw new Error(`unknown workload ${id}`);
  }
  const systems = list(values.systems);
  for (const system of systems) {
    if (!(systemNames as readonly string[]).includes(system)) {
      throw new Error(`unknown system ${system}`);
    }
  }
  const keys = int('keys', values.keys) as number;
  if (keys < 1) throw new Error('--keys must be at least 1');
  const scale = values.scale === undefined ? (values.quick ? 0.05 : 1) : Number(values.scale);
  if (!(scale > 0)) throw new Error('--scale must be positive');
  return {
    workloads: selected as WorkloadId[],
    reps: int('reps', values.reps) ?? (values.quick ? 1 : 3),
    scale,
    n: int('n', values.n),
    procs: list(values.procs).map((text) => int('procs', text) as number),
    concurrency: int('concurrency', values.concurrency) as number,
    producers: int('producers', values.producers) as number,
    batch: int('batch', values.batch) as number,
    intervalMs: int('interval-ms', values['interval-ms']) as number,
    history: Math.round((int('history', values.history) as number) * scale),
    delayed: list(values.delayed).map((text) => int('delayed', text) as number),
    keys,
    engines: Math.max(1, int('engines', values.engines) as number),
    minutes: Math.max(1, int('minutes', values.minutes) as number),
    timeoutMs: (int('timeout-s', values['timeout-s']) as number) * 1000,
    systems: systems as SystemName[],
    causeway: {
      claimBatchSize: int('claim-batch', values['claim-batch']),
      prefetch: int('prefetch', values.prefetch),
      poolSize: int('pool-size', values['pool-size']),
      pollIntervalMs: int('poll-ms', values['poll-ms']),
      leaseMs: int('lease-ms', values['lease-ms']),
    },
    pgbouncer: int('pgbouncer', values.pgbouncer) as number,
    out: values.out,
  };
}
