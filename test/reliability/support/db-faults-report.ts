import type { FixtureProcess } from '../../api/fixtures/processes';
import {
  linesStarting,
  logLevels,
  logLines,
  stillRunning,
  warningsByMessage,
} from './db-faults-processes';

/**
 * What one child process's log says about a database fault: how often its loops failed and
 * waited, and whether every wait kept to the reconnect backoff (exponential from 250 ms,
 * capped at 5 s, between half the ceiling and the ceiling: never a spin).
 */
export interface ProcessReport {
  readonly name: string;
  /** Never exited: no crash, so no crash loop either. */
  readonly running: boolean;
  /** `worker started` lines (a worker process starts its worker once). */
  readonly starts: number;
  /** Lines at error level and above, by message. */
  readonly errors: Record<string, number>;
  /** Lines at warn level and above, by message. */
  readonly warnings: Record<string, number>;
  /** Waits logged by the reconnecting loops (claims, LISTEN, sweeper, scheduler, outbox). */
  readonly waits: readonly BackoffWait[];
  /** Waits outside the backoff's bounds for their failure count. */
  readonly waitsOffPolicy: readonly BackoffWait[];
  /** Steps aborted because the database had not confirmed their lease in time: for how long, ms. */
  readonly unconfirmedLeaseAborts: readonly number[];
  /** The errors the API found unexpected (answered INTERNAL_SERVER_ERROR), their messages. */
  readonly unexpected: readonly string[];
}

export interface BackoffWait {
  readonly msg: string;
  readonly failures: number;
  readonly retryInMs: number;
}

/** The reconnect backoff's ceiling after `failures` failures (reconnect-backoff.ts). */
export function backoffCeilingMs(failures: number): number {
  return Math.min(5_000, 250 * 2 ** Math.max(0, failures - 1));
}

export function processReport(name: string, child: FixtureProcess): ProcessReport {
  const lines = logLines(child);
  const waits = lines
    .filter((line) => typeof line.retryInMs === 'number' && typeof line.failures === 'number')
    .map((line) => ({
      msg: line.msg,
      failures: line.failures as number,
      retryInMs: line.retryInMs as number,
    }));
  const errors: Record<string, number> = {};
  for (const line of lines) {
    if (line.level >= logLevels.error) errors[line.msg] = (errors[line.msg] ?? 0) + 1;
  }
  return {
    name,
    running: stillRunning(child),
    starts: linesStarting(lines, 'worker started').length,
    errors,
    warnings: warningsByMessage(lines),
    waits,
    waitsOffPolicy: waits.filter((wait) => {
      const ceiling = backoffCeilingMs(wait.failures);
      return wait.retryInMs < Math.floor(ceiling / 2) || wait.retryInMs > ceiling;
    }),
    unconfirmedLeaseAborts: linesStarting(lines, 'the database has not confirmed the lease').map(
      (line) => line.unconfirmedMs as number,
    ),
    unexpected: linesStarting(lines, 'unexpected error').map((line) =>
      String((line.err as { message?: unknown } | undefined)?.message),
    ),
  };
}

/** The waits' spread around their ceilings: 0.5 … 1 (all equal would mean no jitter). */
export function jitterSpread(waits: readonly BackoffWait[]): { min: number; max: number } {
  const ratios = waits.map((wait) => wait.retryInMs / backoffCeilingMs(wait.failures));
  return { min: Math.min(1, ...ratios), max: Math.max(0, ...ratios) };
}

/** One line of the scenario's summary for the test output (and RELIABILITY.md). */
export function summarizeProcesses(reports: readonly ProcessReport[]): string {
  return reports
    .map((report) => {
      const waits = report.waits.length;
      const maxFailures = Math.max(0, ...report.waits.map((wait) => wait.failures));
      const maxWait = Math.max(0, ...report.waits.map((wait) => wait.retryInMs));
      const errors = Object.values(report.errors).reduce((sum, n) => sum + n, 0);
      return `${report.name}: running=${report.running} waits=${waits} maxFailures=${maxFailures} maxWaitMs=${maxWait} errorLines=${errors} leaseAborts=${report.unconfirmedLeaseAborts.length}`;
    })
    .join('; ');
}
