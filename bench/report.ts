import type { RunRecord } from './record';
import { summarize } from './stats';
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

/** Causeway ÷ floor per repetition (both measured back to back), for runs that verified. */
function pairedRatios(
  records: readonly RunRecord[],
  pick: (record: RunRecord) => number | undefined,
): number[] {
  const repetition = (r: RunRecord) => `${r.stamp} ${r.rep}`;
  const floorByRep = new Map(
    records.filter((r) => r.system === 'floor' && ok(r)).map((r) => [repetition(r), pick(r)]),
  );
  return records
    .filter((r) => r.system === 'causeway' && ok(r))
    .map((r) => (pick(r) ?? Number.NaN) / (floorByRep.get(repetition(r)) ?? Number.NaN))
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

/** The markdown tables: throughput, pickup latency, and the targets. */
export function formatReport(records: readonly RunRecord[]): string {
  const lines: string[] = [];
  const groups = groupByCase(records);
  const value = (r: RunRecord) => r.value;

  lines.push(
    'Throughput: median (min–max) over repetitions; ratio = Causeway ÷ floor, paired per repetition',
    '',
    '| workload | N | workers | unit | Causeway | floor definition | L (floor) | Causeway ÷ L | runs ok (Causeway, L) |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  for (const group of groups.values()) {
    const first = group[0] as RunRecord;
    if (first.workload === 'w3') continue;
    const workload = workloads[first.workload];
    const causeway = group.filter((r) => r.system === 'causeway');
    const floor = group.filter((r) => r.system === 'floor');
    const workers = first.procs === undefined ? '–' : `${first.procs}×${first.concurrency}`;
    const history = first.history ? ` (${first.history.toLocaleString('en')} finished)` : '';
    const cells = [
      `${workload.title}${history}`,
      first.n.toLocaleString('en'),
      workers,
      workload.unit,
      cell(causeway.filter(ok).map(value) as number[]),
      workload.floorLabel,
      cell(floor.filter(ok).map(value) as number[]),
      cell(pairedRatios(group, value), '×'),
      `${runsOk(causeway)}, ${runsOk(floor)}`,
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
    for (const system of ['causeway', 'floor'] as const) {
      const runs = latencyGroup.filter((r) => r.system === system);
      if (runs.length === 0) continue;
      const good = runs.filter(ok);
      const label = system === 'causeway' ? 'Causeway' : workloads.w3.floorLabel;
      lines.push(
        `| ${label} | ${(['p50', 'p95', 'p99', 'max'] as const).map((key) => cell(good.map(q(key)) as number[])).join(' | ')} | ${runsOk(runs)} |`,
      );
    }
    lines.push(
      `| Causeway ÷ L | ${(['p50', 'p95', 'p99', 'max'] as const).map((key) => cell(pairedRatios(latencyGroup, q(key)), '×')).join(' | ')} | |`,
    );
  }

  lines.push('', ...formatTargets(records));
  return lines.join('\n');
}

/**
 * The issue's targets. The absolute ones come from the peers' run on this machine (PostgreSQL
 * 15, stock settings); on another server compare the ratios instead.
 */
function formatTargets(records: readonly RunRecord[]): string[] {
  const median = (
    workload: string,
    procs: number | undefined,
    pick: (r: RunRecord) => number | undefined,
  ) =>
    summarize(
      records
        .filter((r) => r.system === 'causeway' && r.workload === workload && ok(r))
        .filter((r) => procs === undefined || r.procs === procs)
        .map(pick) as number[],
    ).median;
  const value = (r: RunRecord) => r.value;
  const w2 = median('w2', 1, value);
  const w2h = median('w2h', 1, value);
  const rows: [string, number, string, boolean][] = [
    ['W2 drain 1×10 ≥ tuned graphile-worker (22,988/s here)', w2, 'workflows/s', w2 >= 22_988],
    [
      'W4 three-step ≥ 5 × graphile-worker chained (5 × 735 = 3,675/s)',
      median('w4', undefined, value),
      'workflows/s',
      median('w4', undefined, value) >= 3_675,
    ],
    [
      'W3 pickup p50 ≤ 2.5 ms',
      median('w3', undefined, (r) => r.latency?.p50),
      'ms',
      median('w3', undefined, (r) => r.latency?.p50) <= 2.5,
    ],
    [
      'W3 pickup p99 ≤ 6 ms',
      median('w3', undefined, (r) => r.latency?.p99),
      'ms',
      median('w3', undefined, (r) => r.latency?.p99) <= 6,
    ],
    [
      'W1b batched submit ≥ 50,000/s',
      median('w1b', undefined, value),
      'workflows/s',
      median('w1b', undefined, value) >= 50_000,
    ],
    ['Claim cost flat in finished rows: W2h ÷ W2 (1×10) ≥ 0.9', w2h / w2, '×', w2h / w2 >= 0.9],
  ];
  const concurrencies = [
    ...new Set(records.filter((r) => r.system === 'causeway').map((r) => r.concurrency)),
  ];
  const note = concurrencies.some((c) => c !== 10)
    ? ` — measured with concurrency ${concurrencies.join(', ')}, not the workloads' 10`
    : '';
  return [
    `Targets (Causeway medians; absolute targets were set on this machine's PostgreSQL 15 with stock settings${note})`,
    '',
    '| target | Causeway | met? |',
    '|---|---|---|',
    ...rows
      .filter(([, measured]) => Number.isFinite(measured))
      .map(
        ([target, measured, unit, met]) =>
          `| ${target} | ${format(measured)} ${unit} | ${met ? 'yes' : '**no**'} |`,
      ),
  ];
}
