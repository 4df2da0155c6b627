import type { RunRecord } from './record';
import type { WorkloadId } from './workloads';

const ok = (record: RunRecord) => record.verified && record.error === undefined;

/** A figure of a run's record (NaN when it has none). */
export const figure = (r: RunRecord, key: string): number => Number(r[key] ?? Number.NaN);

/** Whether any Causeway W2 run is in the records: without one, no workload pairs with it. */
export const w2Ran = (records: readonly RunRecord[]): boolean =>
  records.some((r) => r.system === 'causeway' && r.workload === 'w2');

/**
 * Each good Causeway run of `workload` with `procs` worker processes, `over` of it ÷ `under` of
 * the same repetition's W2 run with as many processes (connected directly), W2 measured in the
 * same `pnpm bench` beside it.
 */
export function pairedWithW2(
  records: readonly RunRecord[],
  workload: WorkloadId,
  procs: number,
  over: (r: RunRecord) => number,
  under: (r: RunRecord) => number,
): number[] {
  const key = (r: RunRecord) => `${r.stamp} ${r.rep} ${r.procs}`;
  const w2 = new Map(
    records
      .filter((r) => r.system === 'causeway' && r.workload === 'w2' && ok(r))
      .filter((r) => (r.connection ?? 'direct') === 'direct')
      .map((r) => [key(r), under(r)]),
  );
  return records
    .filter((r) => r.system === 'causeway' && r.workload === workload && ok(r))
    .filter((r) => r.procs === procs)
    .map((r) => over(r) / (w2.get(key(r)) ?? Number.NaN))
    .filter(Number.isFinite);
}
