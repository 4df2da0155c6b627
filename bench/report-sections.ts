import type { RunRecord } from './record';
import type { LatencyStats } from './stats';
import { summarize } from './stats';
import type { SystemName } from './system';

const ok = (record: RunRecord) => record.verified && record.error === undefined;
const causewayRuns = (records: readonly RunRecord[], workload: string) =>
  records.filter((r) => r.system === 'causeway' && r.workload === workload);

const format = (x: number, digits = 2): string => {
  if (!Number.isFinite(x)) return '–';
  if (Math.abs(x) >= 100) return Math.round(x).toLocaleString('en');
  return x.toFixed(digits);
};

function cell(values: readonly number[], suffix = '', digits = 2): string {
  const s = summarize(values);
  if (s.n === 0) return '–';
  if (s.n === 1) return `${format(s.median, digits)}${suffix} (1 run)`;
  return `${format(s.median, digits)}${suffix} (${format(s.min, digits)}–${format(s.max, digits)})`;
}

/** The delayed workflows' multiple of N in a w2d run. */
const factorOf = (r: RunRecord) => Number(r.delayed ?? 0) / r.n;

/** w2d: each delayed case's throughput over the same repetition's case without delayed ones. */
export function formatDelayedSection(records: readonly RunRecord[]): string[] {
  const runs = causewayRuns(records, 'w2d');
  if (runs.length === 0) return [];
  const repetition = (r: RunRecord) => `${r.stamp} ${r.rep} ${r.procs}`;
  const base = new Map(
    runs.filter((r) => ok(r) && factorOf(r) === 0).map((r) => [repetition(r), r.value]),
  );
  const factors = [...new Set(runs.map(factorOf))].sort((a, b) => a - b);
  const lines = [
    '',
    'W2d: drain throughput beside M delayed workflows (a day ahead, queued in the same queue) ÷ the same repetition with M = 0; median (min–max)',
    '',
    '| M delayed | Causeway | ÷ M = 0, paired per repetition | runs ok |',
    '|---|---|---|---|',
  ];
  for (const factor of factors) {
    const group = runs.filter((r) => factorOf(r) === factor);
    const good = group.filter(ok);
    const ratios = good
      .map((r) => (r.value ?? Number.NaN) / (base.get(repetition(r)) ?? Number.NaN))
      .filter(Number.isFinite);
    const m = Number(group[0]?.delayed ?? 0);
    lines.push(
      `| ${m.toLocaleString('en')} (${factor}N) | ${cell(
        good.map((r) => r.value as number),
        '/s',
      )} | ${factor === 0 ? '1' : cell(ratios, '×')} | ${good.length}/${group.length} |`,
    );
  }
  return lines;
}

interface PerMinute {
  readonly total: number;
  readonly quietPerMinute: number;
  readonly ticks: number;
}

/** w5: the engines' and their backends' CPU per minute, and the ticks' lateness. */
export function formatScheduleSection(records: readonly RunRecord[]): string[] {
  const runs = causewayRuns(records, 'w5');
  if (runs.length === 0) return [];
  const good = runs.filter(ok);
  const first = runs[0] as RunRecord;
  const node = (key: keyof PerMinute) => good.map((r) => (r.nodeCpu as PerMinute)[key]);
  const db = (key: keyof PerMinute) =>
    good.map((r) => (r.dbCpu as PerMinute | null)?.[key] ?? Number.NaN);
  const late = (key: keyof LatencyStats) => good.map((r) => (r.lateness as LatencyStats)[key]);
  const spans = good.map((r) =>
    Math.max(...(r.ticks as { spanMs: number }[]).map((t) => t.spanMs)),
  );
  return [
    '',
    `W5: ${first.n.toLocaleString('en')} schedules on \`* * * * *\` in ${first.engines} engine processes, ${first.minutes} whole minutes measured per run (each holds one tick); median (min–max) over runs`,
    '',
    '| measure | all engines | of which the ticks (total − quiet rate) |',
    '|---|---|---|',
    `| Node CPU, s per minute | ${cell(node('total'), ' s', 3)} | ${cell(node('ticks'), ' s', 3)} |`,
    `| their PostgreSQL backends' CPU (/proc), s per minute | ${cell(db('total'), ' s', 3)} | ${cell(db('ticks'), ' s', 3)} |`,
    `| Node CPU per schedule and tick | | ${cell(
      good.map((r) => Number(r.nodeUsPerScheduleTick)),
      ' µs',
      0,
    )} |`,
    '',
    '| tick lateness (created_at − tick) | p50 | p99 | max | first-to-last workflow of a tick | runs ok |',
    '|---|---|---|---|---|---|',
    `| ms | ${cell(late('p50'), '', 0)} | ${cell(late('p99'), '', 0)} | ${cell(late('max'), '', 0)} | ${cell(spans, '', 0)} | ${good.length}/${runs.length} |`,
  ];
}

export type TargetRow = [string, (system: SystemName) => number, string, (x: number) => boolean];

/** The targets of w2d and w5, for the report's targets table (Causeway only). */
export function delayedAndScheduleTargets(records: readonly RunRecord[]): TargetRow[] {
  const medianOf = (system: SystemName, workload: string, keep: (r: RunRecord) => boolean) =>
    summarize(
      records
        .filter((r) => r.system === system && r.workload === workload && ok(r) && keep(r))
        .map((r) => r.value as number),
    ).median;
  const w5 = (system: SystemName) =>
    records.filter((r) => r.system === system && r.workload === 'w5' && ok(r));
  return [
    [
      'Claim cost flat in delayed tasks: W2d M = N ÷ M = 0 ≥ 0.9',
      (system) =>
        medianOf(system, 'w2d', (r) => factorOf(r) === 1) /
        medianOf(system, 'w2d', (r) => factorOf(r) === 0),
      '×',
      (x) => x >= 0.9,
    ],
    [
      'W5 scheduler < 1 s of Node CPU per minute, all engines (median run)',
      (system) => medianOf(system, 'w5', () => true),
      's',
      (x) => x < 1,
    ],
    [
      'W5 no tick late by more than 2 s (max over all runs)',
      (system) => {
        const runs = w5(system);
        return runs.length === 0
          ? Number.NaN
          : Math.max(...runs.map((r) => (r.lateness as LatencyStats).max / 1000));
      },
      's',
      (x) => x <= 2,
    ],
  ];
}
