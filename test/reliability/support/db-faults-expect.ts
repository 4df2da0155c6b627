import { expect } from 'vitest';
import { jitterSpread, summarizeProcesses } from './db-faults-report';
import type { ScenarioResult } from './db-faults-scenario';

/** Processing resumes within this long of the database being back (issue 19). */
export const resumeLimitMs = 30_000;

/**
 * What every database-fault scenario must show: the processes ran through it (no exit, one
 * start), every wait kept to the backoff, the API answered only successes or
 * DATABASE_UNAVAILABLE, processing resumed in time, no lease stayed held past its sweep,
 * and every accepted submit finished `succeeded` once, with R25 and the aggregation holding.
 */
export function expectRecovered(
  result: ScenarioResult,
  options: {
    readonly minFailureStreak: number;
    readonly leaseMs: number;
    /** Steps that must have been aborted for a lease the database did not confirm. */
    readonly minUnconfirmedAborts?: number;
  },
): void {
  console.info(
    `[db-faults] ${result.windows.length} windows, resume ms ${result.windows.map((window) => window.resumeMs).join('/')}, ` +
      `${result.submitted} submitted, answers ${JSON.stringify(result.answers)}, ` +
      `workflows ${JSON.stringify(result.final.workflows)}, re-runs ${result.final.reruns}, ` +
      `reasons ${JSON.stringify(result.final.reasons)}, max overdue lease ${result.maxOverdueMs} ms, ` +
      `${summarizeProcesses(result.processes)}, ${result.durationMs} ms`,
  );
  // A step whose lease went unconfirmed stopped before the lease could run out.
  const aborts = result.processes.flatMap((report) => report.unconfirmedLeaseAborts);
  expect(aborts.length).toBeGreaterThanOrEqual(options.minUnconfirmedAborts ?? 0);
  for (const unconfirmedMs of aborts) expect(unconfirmedMs).toBeLessThan(options.leaseMs);
  for (const report of result.processes) {
    expect(report.running, `${report.name} exited`).toBe(true);
    if (report.name !== 'api') expect(report.starts, `${report.name} starts`).toBe(1);
    expect(report.waitsOffPolicy, `${report.name} waits off the backoff`).toEqual([]);
  }
  const waits = result.processes.flatMap((report) => report.waits);
  expect(Math.max(0, ...waits.map((wait) => wait.failures))).toBeGreaterThanOrEqual(
    options.minFailureStreak,
  );
  if (waits.length >= 5) {
    const spread = jitterSpread(waits);
    expect(spread.max - spread.min).toBeGreaterThan(0.05);
  }
  const unexpected = result.processes.flatMap((report) => report.unexpected);
  expect({ answers: result.unexpectedAnswers, unexpected }).toEqual({
    answers: {},
    unexpected: [],
  });
  for (const window of result.windows) expect(window.resumeMs).toBeLessThan(resumeLimitMs);
  expect(result.overdueSamples).toBe(0);
  expect(result.final.lost).toBe(0);
  expect(result.final.extra).toBe(0);
  expect(result.final.workflows).toEqual({ succeeded: result.submitted + result.holds });
  expect(result.final.r25).toEqual([]);
  expect(result.final.aggregation).toEqual([]);
}
