import type { RunRecord } from './record';
import { cell } from './report-scaling';
import type { TargetRow } from './report-sections';
import { figure, pairedWithW2, w2Ran } from './report-w2-pairs';
import { summarize } from './stats';

const ok = (record: RunRecord) => record.verified && record.error === undefined;
const keyedRuns = (records: readonly RunRecord[]) =>
  records.filter((r) => r.system === 'causeway' && r.workload === 'w2k');

const goToDone = (r: RunRecord) => r.value as number;
const byLog = (r: RunRecord) => figure(r, 'logRate');

/**
 * W2k: per worker count, the keyed drain and keyed ÷ plain, each W2k run paired with the W2
 * run of the same repetition and worker processes: go → done (the table's figure) and by the
 * log (first claim → last end, the start-up left out). Without W2 in the run, it says so.
 */
export function formatKeyedSection(records: readonly RunRecord[]): string[] {
  const runs = keyedRuns(records);
  if (runs.length === 0) return [];
  const withW2 = w2Ran(records);
  const keys = Number((runs[0] as RunRecord).keys);
  const lines = [
    '',
    `W2k: W2 with every task keyed (R50), ${keys.toLocaleString('en')} keys of limit 1 (input i on key i mod ${keys}); keyed ÷ plain pairs each run with the same repetition's W2 with as many worker processes; median (min–max) over runs`,
    '',
    '| workers | W2k go → done | ÷ W2 go → done, paired | W2k by the log (first claim → last end) | ÷ W2 by the log, paired | runs ok |',
    '|---|---|---|---|---|---|',
  ];
  for (const procs of [...new Set(runs.map((r) => r.procs ?? 1))].sort((a, b) => a - b)) {
    const group = runs.filter((r) => r.procs === procs);
    const good = group.filter(ok);
    const ratio = (pick: (r: RunRecord) => number) =>
      withW2 ? cell(pairedWithW2(records, 'w2k', procs, pick, pick), '×') : 'W2 not run';
    const cells = [
      `${procs}×${(group[0] as RunRecord).concurrency}`,
      cell(good.map(goToDone), '/s', 0),
      ratio(goToDone),
      cell(good.map(byLog), '/s', 0),
      ratio(byLog),
      `${good.length}/${group.length}`,
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  if (!withW2) {
    lines.push(
      '',
      'W2 was not selected, so there is no keyed ÷ plain ratio: run `--workload w2,w2k` (`all` has both).',
    );
  }
  return lines;
}

/** W2k's target, for the report's targets table (Causeway only). */
export function keyedTargets(records: readonly RunRecord[]): TargetRow[] {
  return [
    [
      'W2k keyed ÷ W2 1×10 ≥ 0.8, same run, by the log (median of paired ratios)',
      () => summarize(pairedWithW2(records, 'w2k', 1, byLog, byLog)).median,
      '×',
      (x) => x >= 0.8,
    ],
  ];
}
