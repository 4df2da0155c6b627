import type { LockWaits } from './parent-watch';
import type { RunRecord } from './record';
import { cell } from './report-scaling';
import type { TargetRow } from './report-sections';
import { figure, pairedWithW2 } from './report-w2-pairs';
import { nearestRank, summarize } from './stats';

const ok = (record: RunRecord) => record.verified && record.error === undefined;
const fanOutRuns = (records: readonly RunRecord[]) =>
  records.filter((r) => r.system === 'causeway' && r.workload === 'w6');

/**
 * Each W6 run's drain ÷ the same repetition's W2 drain with as many worker processes: by the
 * log (first claim to last end, like for like), or W2's own figure (go to done).
 */
function w2Ratios(records: readonly RunRecord[], procs: number, by: 'log' | 'figure'): number[] {
  const drain = (r: RunRecord) => r.value as number;
  return pairedWithW2(records, 'w6', procs, drain, (r) =>
    by === 'log' ? figure(r, 'logRate') : (r.value as number),
  );
}

/**
 * W6: per worker count, the step's claim to the start of the transaction that writes its
 * children, that transaction's duration (start to the first sample that saw it committed), the
 * children's drain and its ratios to W2, the parent's settle after its last child, and the lock
 * waits sampled during the drain.
 */
export function formatFanOutSection(records: readonly RunRecord[]): string[] {
  const runs = fanOutRuns(records);
  if (runs.length === 0) return [];
  const lines = [
    '',
    `W6: one step starts ${(runs[0] as RunRecord).n.toLocaleString('en')} one-step child workflows; times from the transition log (database time, an edge's \`at\` is its transaction's start) and a watch sampling every 1–5 ms; median (min–max) over runs`,
    '',
    '| workers | claim → `children_started` | that transaction, start → seen committed | children drain (first claim → last end) | ÷ W2 by the log, paired | ÷ W2 go → done, paired | parent settle after the last child: log / seen | samples with a wait on the parent rows (workflow, step) | longest lock wait (on those rows) | runs ok |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const procs of [...new Set(runs.map((r) => r.procs ?? 1))].sort((a, b) => a - b)) {
    const group = runs.filter((r) => r.procs === procs);
    const good = group.filter(ok);
    const waits = good.map((r) => r.lockWaits as LockWaits);
    const share = waits.map((w) => (100 * w.onParent) / Math.max(1, w.samples));
    const ms = (key: string, digits = 0) =>
      cell(
        good.map((r) => figure(r, key)),
        ' ms',
        digits,
      );
    const cells = [
      `${procs}×${(group[0] as RunRecord).concurrency}`,
      ms('stepToStartMs'),
      ms('commitMs'),
      cell(
        good.map((r) => r.value as number),
        '/s',
        0,
      ),
      cell(w2Ratios(records, procs, 'log'), '×'),
      cell(w2Ratios(records, procs, 'figure'), '×'),
      `${ms('settleLogMs', 1)} / ${ms('settleSeenMs')}`,
      `${cell(share, ' %', 1)} of ${cell(
        waits.map((w) => w.samples),
        '',
        0,
      )}`,
      `${cell(
        waits.map((w) => w.longestMs),
        ' ms',
        0,
      )} (${cell(
        waits.map((w) => w.longestOnParentMs),
        ' ms',
        0,
      )})`,
      `${good.length}/${group.length}`,
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines;
}

/** W6's targets, for the report's targets table (Causeway only). */
export function fanOutTargets(records: readonly RunRecord[]): TargetRow[] {
  const good = fanOutRuns(records).filter(ok);
  const slowest = (key: string) => Math.max(...good.map((r) => figure(r, key)));
  const p99 = (key: string) =>
    nearestRank(
      good.map((r) => figure(r, key)).sort((a, b) => a - b),
      0.99,
    );
  const ratio = (procs: number) => summarize(w2Ratios(records, procs, 'log')).median;
  const any = good.length > 0;
  return [
    [
      'W6 the step starting N children commits ≤ 1 s (slowest run, start → seen committed)',
      () => (any ? slowest('commitMs') / 1000 : Number.NaN),
      's',
      (x) => x <= 1,
    ],
    [
      'W6 children drain ≥ 0.8 × W2 1×10, same run, by the log (median of paired ratios)',
      () => ratio(1),
      '×',
      (x) => x >= 0.8,
    ],
    [
      'W6 parent settles ≤ 1 s after its last child (p99 over runs, as seen)',
      () => (any ? p99('settleSeenMs') / 1000 : Number.NaN),
      's',
      (x) => x <= 1,
    ],
    [
      'W6 2×10 children drain ≥ 0.8 × W2 2×10, same run, by the log',
      () => ratio(2),
      '×',
      (x) => x >= 0.8,
    ],
  ];
}
