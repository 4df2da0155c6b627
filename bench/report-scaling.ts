import type { RunRecord } from './record';
import { summarize } from './stats';

const ok = (record: RunRecord) => record.verified && record.error === undefined;

interface Cores {
  readonly db: number;
  readonly workers: number;
  readonly pooler: number;
}

const format = (x: number, digits: number): string => {
  if (!Number.isFinite(x)) return '–';
  if (Math.abs(x) >= 100) return Math.round(x).toLocaleString('en');
  return x.toFixed(digits);
};

/** `median (min–max)` of the finite values, with `digits` below 100. */
export function cell(values: readonly number[], suffix = '', digits = 2): string {
  const s = summarize(values.filter(Number.isFinite));
  if (s.n === 0) return '–';
  if (s.n === 1) return `${format(s.median, digits)}${suffix} (1 run)`;
  return `${format(s.median, digits)}${suffix} (${format(s.min, digits)}–${format(s.max, digits)})`;
}

/**
 * W2 by worker processes (`--procs 1,2,4,8`) and, with `--pgbouncer`, with prepared
 * statements off and through PgBouncer (which needs them off), so the two costs part:
 * throughput, its ratio to one process connected directly (same repetition), and the CPU
 * cores the server, the workers and the pooler kept busy from go to done, beside the
 * machine's core count, so where the throughput stops can be read against what ran out.
 */
export function formatScalingSection(records: readonly RunRecord[]): string[] {
  const runs = records.filter((r) => r.system === 'causeway' && r.workload === 'w2');
  const cases = [...new Set(runs.map((r) => r.case))];
  if (cases.length < 2) return [];
  const repetition = (r: RunRecord) => `${r.stamp} ${r.rep}`;
  const single = new Map(
    runs
      .filter((r) => ok(r) && r.procs === 1 && (r.connection ?? 'direct') === 'direct')
      .map((r) => [repetition(r), r.value as number]),
  );
  const cpus = runs[0]?.cpus;
  const lines = [
    '',
    `W2 scaling: Causeway by worker processes (each concurrency ${runs[0]?.concurrency}), on a machine with ${cpus ?? '?'} CPU cores shared by the server, the workers, the pooler and the bench; median (min–max). Cores = CPU seconds ÷ elapsed seconds from go to done (the server's figure is every PostgreSQL process, the bench's 5 ms progress poll included).`,
    '',
    '| case | workflows/s | ÷ 1 process direct, paired | server cores | workers cores | PgBouncer cores | runs ok |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const name of cases) {
    const group = runs.filter((r) => r.case === name);
    const good = group.filter(ok);
    const cores = (pick: (c: Cores) => number) =>
      cell(good.map((r) => (r.cores === undefined ? Number.NaN : pick(r.cores as Cores))));
    const ratios = good.map((r) => (r.value as number) / (single.get(repetition(r)) ?? Number.NaN));
    lines.push(
      `| ${name} | ${cell(
        good.map((r) => r.value as number),
        '',
        0,
      )} | ${cell(ratios, '×')} | ${cores((c) => c.db)} | ${cores((c) => c.workers)} | ${cores((c) => c.pooler)} | ${good.length}/${group.length} |`,
    );
  }
  return lines;
}
