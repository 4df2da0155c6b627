import type pg from 'pg';
import { type LatencyStats, latencyStats } from '../stats';

/** What the database holds of the ticks: lateness and exactly-once, checked per tick. */
export interface TickReport {
  /** Workflow created_at − tick, ms, over the measured ticks' workflows. */
  readonly lateness: LatencyStats;
  /** Per measured tick: its ISO time, workflows, the latest lateness and the first-to-last spread. */
  readonly ticks: readonly {
    readonly tick: string;
    readonly workflows: number;
    readonly maxLateMs: number;
    readonly spanMs: number;
  }[];
  /** Ticks seen before the measured ones (after the engines started). */
  readonly earlierTicks: number;
  readonly problems: readonly string[];
  readonly checks: Readonly<Record<string, number>>;
}

/**
 * Reads every workflow the schedules submitted with the tick in its creation row's detail, and
 * checks: every tick from the first seen to the last measured has exactly one workflow per
 * schedule (none twice, none missing), the measured ticks are exactly `measured`, no tick is
 * later than the last one, and every creation row is as old as its workflow. Lateness is
 * `created_at` (the scheduler transaction's start: the claim of the due row) minus the tick;
 * the workflow is visible from that transaction's commit, a few milliseconds later.
 */
export async function readTicks(
  pool: pg.Pool,
  workflowName: string,
  schedules: number,
  measured: readonly number[],
): Promise<TickReport> {
  const { rows } = await pool.query<{
    schedule: string | null;
    tick: string | null;
    created_ms: number;
    logged_ms: number;
  }>(
    `select tr.detail->>'schedule' as schedule, tr.detail->>'tick' as tick,
            extract(epoch from w.created_at)::float8 * 1000 as created_ms,
            extract(epoch from tr.at)::float8 * 1000 as logged_ms
       from causeway_workflows as w
       join causeway_transitions as tr
         on tr.workflow_id = w.id and tr.task_id is null and tr.from_state is null
      where w.name = $1`,
    [workflowName],
  );
  const problems: string[] = [];
  const byTick = new Map<number, { names: Set<string>; created: number[] }>();
  let duplicates = 0;
  let logMismatches = 0;
  for (const row of rows) {
    if (row.schedule === null || row.tick === null) {
      problems.push('a scheduled workflow without schedule and tick in its creation row');
      continue;
    }
    const tick = Date.parse(row.tick);
    const entry = byTick.get(tick) ?? { names: new Set<string>(), created: [] };
    byTick.set(tick, entry);
    if (entry.names.has(row.schedule)) duplicates += 1;
    entry.names.add(row.schedule);
    entry.created.push(row.created_ms - tick);
    if (Math.abs(row.logged_ms - row.created_ms) > 1) logMismatches += 1;
  }
  const seen = [...byTick.keys()].sort((a, b) => a - b);
  const last = measured.at(-1) ?? Number.NaN;
  const first = seen[0] ?? Number.NaN;
  let incomplete = 0;
  for (let tick = first; tick <= last; tick += 60_000) {
    const entry = byTick.get(tick);
    if (entry?.names.size !== schedules || entry.created.length !== schedules) incomplete += 1;
  }
  const later = seen.filter((tick) => tick > last).length;
  const missingMeasured = measured.filter((tick) => !byTick.has(tick)).length;
  if (duplicates > 0)
    problems.push(`${duplicates} (schedule, tick) pairs with more than one workflow`);
  if (incomplete > 0)
    problems.push(`${incomplete} ticks without exactly one workflow per schedule`);
  if (missingMeasured > 0) problems.push(`${missingMeasured} measured ticks without workflows`);
  if (later > 0) problems.push(`${later} ticks after the last measured one`);
  if (logMismatches > 0) problems.push(`${logMismatches} creation rows not at created_at`);
  const ticks = measured.map((tick) => {
    const created = byTick.get(tick)?.created ?? [];
    return {
      tick: new Date(tick).toISOString(),
      workflows: created.length,
      maxLateMs: Math.max(...created),
      spanMs: Math.max(...created) - Math.min(...created),
    };
  });
  return {
    lateness: latencyStats(measured.flatMap((tick) => byTick.get(tick)?.created ?? [])),
    ticks,
    earlierTicks: seen.filter((tick) => tick < (measured[0] ?? Number.NaN)).length,
    problems,
    checks: {
      workflows: rows.length,
      ticksSeen: seen.length,
      duplicates,
      incompleteTicks: incomplete,
      logMismatches,
    },
  };
}
