import type { RunRecord } from './record';
import { fanOutTargets, formatFanOutSection } from './report-fan-out';
import { formatKeyedSection, keyedTargets } from './report-keyed';
import { formatScalingSection } from './report-scaling';
import {
  delayedAndScheduleTargets,
  formatDelayedSection,
  formatScheduleSection,
} from './report-sections';
import { summarize } from './stats';
import type { SystemName } from './system';
import { workloads } from './workloads';

const format = (x: number): string => {
  if (!Number.isFinite(x)) return '–';
  if (Math.abs(x) >= 100) return String(Math.round(x));
  if (Math.abs(x) >= 10) return x.toFixed(1);
  return x.toFixed(2);
};

/** `median (min–max)` over the values, as the peers' harness prints them. */
export function cell(values: readonly number[], suffix = ''): string {
  const s = summarize(values);
  if (s.n === 0) return '–';
  if (s.n === 1) return `${format(s.median)}${suffix} (1 run)`;
  return `${format(s.median)}${suffix} (${format(s.min)}–${format(s.max)})`;
}

const ok = (record: RunRecord) => record.verified && record.error === undefined;

/**
 * `over` ÷ `under` per repetition (both measured back to back), for runs that verified:
 * Causeway ÷ L by default; S ÷ L and Causeway ÷ S when S ran.
 */
function pairedRatios(
  records: readonly RunRecord[],
  pick: (record: RunRecord) => number | undefined,
  over: SystemName = 'causeway',
  under: SystemName = 'floor',
): number[] {
  const repetition = (r: RunRecord) => `${r.stamp} ${r.rep}`;
  const underByRep = new Map(
    records.filter((r) => r.system === under && ok(r)).map((r) => [repetition(r), pick(r)]),
  );
  return records
    .filter((r) => r.system === over && ok(r))
    .map((r) => (pick(r) ?? Number.NaN) / (underByRep.get(repetition(r)) ?? Number.NaN))
    .filter((ratio) => Number.isFinite(ratio));
}

function groupByCase(records: readonly RunRecord[]): Map<string, RunRecord[]> {
  const groups = new Map<string, RunRecord[]>();
  for (const record of records) {
    groups.set(record.case, [...(groups.get(record.case) ?? []), record]);
  }
  return groups;
}

const runsOk = (records: readonly RunRecord[]) => `${records.filter(ok).length}/${records.length}`;

/**
 * The markdown tables: throughput, pickup latency, and the targets. When S (the
 * contract floor) ran, each table gains its figures and its ratios to L and Causeway.
 */
export function formatReport(records: readonly RunRecord[]): string {
  const lines: string[] = [];
  const groups = groupByCase(records);
  const value = (r: RunRecord) => r.value;
  const withS = records.some((r) => r.system === 'spec');

  lines.push(
    'Throughput: median (min–max) over repetitions; ratio = Causeway ÷ floor, paired per repetition',
    ...(withS
      ? [
          '',
          "S = the contract floor, raw SQL making the writes docs/rules.md requires: L's k, loops and wake-ups over copies of Causeway's tables, with every required write (state edges, leases, parent state, one log row per edge), one statement per submit, claim and completion.",
        ]
      : []),
    '',
    withS
      ? '| workload | N | workers | unit | Causeway | floor definition | L (floor) | Causeway ÷ L | S (contract floor) | S ÷ L | Causeway ÷ S | runs ok (Causeway, L, S) |'
      : '| workload | N | workers | unit | Causeway | floor definition | L (floor) | Causeway ÷ L | runs ok (Causeway, L) |',
    withS
      ? '|---|---|---|---|---|---|---|---|---|---|---|---|'
      : '|---|---|---|---|---|---|---|---|---|',
  );
  for (const group of groups.values()) {
    const first = group[0] as RunRecord;
    if (first.workload === 'w3' || first.workload === 'w5') continue;
    const workload = workloads[first.workload];
    const causeway = group.filter((r) => r.system === 'causeway');
    const floor = group.filter((r) => r.system === 'floor');
    const specFloor = group.filter((r) => r.system === 'spec');
    const workers = first.procs === undefined ? '–' : `${first.procs}×${first.concurrency}`;
    const history = first.history ? ` (${first.history.toLocaleString('en')} finished)` : '';
    const delayed =
      typeof first.delayed === 'number' ? ` (+${first.delayed.toLocaleString('en')} delayed)` : '';
    const keys =
      typeof first.keys === 'number' ? ` (${first.keys.toLocaleString('en')} keys, limit 1)` : '';
    const pooled = first.pgbouncer
      ? ` via PgBouncer (${first.pgbouncer} server connections)`
      : first.connection === 'unprepared'
        ? ', prepared statements off'
        : '';
    const cells = [
      `${workload.title}${history}${delayed}${keys}${pooled}`,
      first.n.toLocaleString('en'),
      workers,
      workload.unit,
      cell(causeway.filter(ok).map(value) as number[]),
      workload.floorLabel,
      cell(floor.filter(ok).map(value) as number[]),
      cell(pairedRatios(group, value), '×'),
      ...(withS
        ? [
            cell(specFloor.filter(ok).map(value) as number[]),
            cell(pairedRatios(group, value, 'spec', 'floor'), '×'),
            cell(pairedRatios(group, value, 'causeway', 'spec'), '×'),
            `${runsOk(causeway)}, ${runsOk(floor)}, ${runsOk(specFloor)}`,
          ]
        : [`${runsOk(causeway)}, ${runsOk(floor)}`]),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }

  const latencyGroup = [...groups.values()].find((group) => group[0]?.workload === 'w3');
  if (latencyGroup !== undefined) {
    const first = latencyGroup[0] as RunRecord;
    const q = (key: 'p50' | 'p95' | 'p99' | 'max') => (r: RunRecord) => r.latency?.[key];
    lines.push(
      '',
      `W3 pickup latency (ms): ${first.n} submits ${first.intervalMs ?? 10} ms apart to an idle worker (concurrency ${first.concurrency}); median (min–max)`,
      '',
      '| system | p50 | p95 | p99 | max | runs ok |',
      '|---|---|---|---|---|---|',
    );
    for (const system of ['causeway', 'floor', 'spec'] as const) {
      const runs = latencyGroup.filter((r) => r.system === system);
      if (runs.length === 0) continue;
      const good = runs.filter(ok);
      const label =
        system === 'causeway'
          ? 'Causeway'
          : system === 'floor'
            ? workloads.w3.floorLabel
            : (runs[0] as RunRecord).label;
      lines.push(
        `| ${label} | ${(['p50', 'p95', 'p99', 'max'] as const).map((key) => cell(good.map(q(key)) as number[])).join(' | ')} | ${runsOk(runs)} |`,
      );
    }
    const ratios: [string, SystemName, SystemName][] = withS
      ? [
          ['Causeway ÷ L', 'causeway', 'floor'],
          ['S ÷ L', 'spec', 'floor'],
          ['Causeway ÷ S', 'causeway', 'spec'],
        ]
      : [['Causeway ÷ L', 'causeway', 'floor']];
    for (const [name, over, under] of ratios) {
      lines.push(
        `| ${name} | ${(['p50', 'p95', 'p99', 'max'] as const).map((key) => cell(pairedRatios(latencyGroup, q(key), over, under), '×')).join(' | ')} | |`,
      );
    }
  }

  lines.push(
    ...formatScalingSection(records),
    ...formatKeyedSection(records),
    ...formatDelayedSection(records),
    ...formatScheduleSection(records),
    ...formatFanOutSection(records),
  );
  lines.push('', ...formatTargets(records));
  return lines.join('\n');
}

/**
 * The issue's targets. The absolute ones come from the peers' run on this machine (PostgreSQL
 * 15, stock settings); on another server compare the ratios instead. When S ran, its medians
 * say whether a target is reachable at all with the writes docs/rules.md requires.
 */
function formatTargets(records: readonly RunRecord[]): string[] {
  const median = (
    system: SystemName,
    workload: string,
    procs: number | undefined,
    pick: (r: RunRecord) => number | undefined,
  ) =>
    summarize(
      records
        .filter((r) => r.system === system && r.workload === workload && ok(r))
        .filter((r) => procs === undefined || r.procs === procs)
        .map(pick) as number[],
    ).median;
  const value = (r: RunRecord) => r.value;
  /** The largest figure over every good repetition (-Infinity, shown as –, when none ran). */
  const slowest = (
    system: SystemName,
    workload: string,
    pick: (r: RunRecord) => number | undefined,
  ) =>
    Math.max(
      ...records
        .filter((r) => r.system === system && r.workload === workload && ok(r))
        .map((r) => pick(r) ?? Number.NaN),
    );
  const w3PollMs = pollIntervalMs(
    records.find((r) => r.system === 'causeway' && r.workload === 'w3'),
  );
  const rows: [string, (system: SystemName) => number, string, (x: number) => boolean][] = [
    [
      'W2 drain 1×10 ≥ tuned graphile-worker (22,988/s here)',
      (system) => median(system, 'w2', 1, value),
      'workflows/s',
      (x) => x >= 22_988,
    ],
    [
      'W4 three-step ≥ 5 × graphile-worker chained (5 × 735 = 3,675/s)',
      (system) => median(system, 'w4', undefined, value),
      'workflows/s',
      (x) => x >= 3_675,
    ],
    [
      'W3 pickup p50 ≤ 2.5 ms',
      (system) => median(system, 'w3', undefined, (r) => r.latency?.p50),
      'ms',
      (x) => x <= 2.5,
    ],
    [
      'W3 pickup p99 ≤ 6 ms',
      (system) => median(system, 'w3', undefined, (r) => r.latency?.p99),
      'ms',
      (x) => x <= 6,
    ],
    [
      // The test suite shows only that a wake-up comes (test/reliability/lost-listen.test.ts);
      // that it comes long before the poll would is shown here, on a quiet machine.
      `W3 pickup max < the poll interval (${format(w3PollMs)} ms): every pickup a wake-up`,
      (system) => slowest(system, 'w3', (r) => r.latency?.max),
      'ms',
      (x) => x < w3PollMs,
    ],
    [
      'W1b batched submit ≥ 50,000/s',
      (system) => median(system, 'w1b', undefined, value),
      'workflows/s',
      (x) => x >= 50_000,
    ],
    [
      'Claim cost flat in finished rows: W2h ÷ W2 (1×10) ≥ 0.9',
      (system) => median(system, 'w2h', 1, value) / median(system, 'w2', 1, value),
      '×',
      (x) => x >= 0.9,
    ],
    ...keyedTargets(records),
    ...delayedAndScheduleTargets(records),
    ...fanOutTargets(records),
  ];
  const withS = records.some((r) => r.system === 'spec');
  const concurrencies = [
    ...new Set(records.filter((r) => r.system === 'causeway').map((r) => r.concurrency)),
  ];
  const note = concurrencies.some((c) => c !== 10)
    ? ` — measured with concurrency ${concurrencies.join(', ')}, not the workloads' 10`
    : '';
  const shown = (measured: number, unit: string, met: boolean) =>
    Number.isFinite(measured) ? `${format(measured)} ${unit} | ${met ? 'yes' : '**no**'}` : '– | –';
  return [
    `Targets (Causeway medians${withS ? ', and S medians' : ''}; absolute targets were set on this machine's PostgreSQL 15 with stock settings${note})`,
    '',
    withS
      ? '| target | Causeway | met? | S (contract floor) | met by S? |'
      : '| target | Causeway | met? |',
    withS ? '|---|---|---|---|---|' : '|---|---|---|',
    ...rows.flatMap(([target, measure, unit, meets]) => {
      const causeway = measure('causeway');
      const specFloor = withS ? measure('spec') : Number.NaN;
      if (!Number.isFinite(causeway) && !Number.isFinite(specFloor)) return [];
      const cells = [target, shown(causeway, unit, meets(causeway))];
      if (withS) cells.push(shown(specFloor, unit, meets(specFloor)));
      return [`| ${cells.join(' | ')} |`];
    }),
  ];
}

/** The Causeway worker's poll interval in a run: `--poll-ms`, else the engine's default. */
function pollIntervalMs(record: RunRecord | undefined): number {
  const configured = record?.config.pollIntervalMs;
  return typeof configured === 'number' ? configured : 1_000;
}
