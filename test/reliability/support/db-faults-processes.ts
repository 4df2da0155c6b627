import { libfaketime, libfaketimePath, requireTestProgram } from '../../../scripts/test-programs';
import { type FixtureProcess, spawnFixture } from '../../api/fixtures/processes';
import { operators } from '../../api/helpers';

/**
 * The child processes of the database-fault scenarios (worker processes and an API process,
 * spawned with `spawnFixture`, killed after the test) and what their pino logs say.
 */

export interface WorkerSpec {
  /** `chain` (fault-chain on q-faults) or `skew:<clock>` (that clock's workflow and schedule). */
  readonly load: string;
  readonly leaseMs: number;
  readonly pollMs: number;
  readonly concurrency: number;
  readonly sweeper: boolean;
  /** A libfaketime offset for the process's clock, e.g. `+5h`. */
  readonly faketime?: string;
}

export function startWorkerProcess(databaseUrl: string, spec: WorkerSpec): FixtureProcess {
  // Without the library the child would run on time and only a later assertion would show it.
  if (spec.faketime !== undefined) requireTestProgram(libfaketime);
  return spawnFixture(new URL('./db-faults-worker.ts', import.meta.url), {
    CAUSEWAY_CHILD_DATABASE_URL: databaseUrl,
    FAULTS_LOAD: spec.load,
    FAULTS_LEASE_MS: String(spec.leaseMs),
    FAULTS_POLL_MS: String(spec.pollMs),
    FAULTS_CONCURRENCY: String(spec.concurrency),
    FAULTS_SWEEPER: spec.sweeper ? '1' : '0',
    ...(spec.faketime === undefined
      ? {}
      : { LD_PRELOAD: libfaketimePath, FAKETIME: spec.faketime }),
  });
}

export function startApiProcess(databaseUrl: string): FixtureProcess {
  return spawnFixture(new URL('./db-faults-api.ts', import.meta.url), {
    CAUSEWAY_CHILD_DATABASE_URL: databaseUrl,
    CAUSEWAY_OPERATORS: JSON.stringify(operators),
  });
}

/** One pino line of a child's log. */
export interface LogLine {
  readonly level: number;
  /** The child's Date.now() when it wrote the line (its own, possibly skewed, clock). */
  readonly time: number;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** The JSON lines of a child's output (anything else it printed is skipped). */
export function logLines(child: FixtureProcess): LogLine[] {
  const lines: LogLine[] = [];
  for (const text of child.output().split('\n')) {
    if (!text.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(text) as LogLine);
    } catch {
      // A line cut by the end of the output so far: read again later.
    }
  }
  return lines;
}

/** pino's level numbers. */
export const logLevels = Object.freeze({ warn: 40, error: 50, fatal: 60 });

/** Lines whose message starts with `prefix`. */
export function linesStarting(lines: readonly LogLine[], prefix: string): LogLine[] {
  return lines.filter((line) => line.msg.startsWith(prefix));
}

/** Still the process that was started: never exited, so never crashed or restarted. */
export function stillRunning(child: FixtureProcess): boolean {
  return child.process.exitCode === null && child.process.signalCode === null;
}

/** How often each message appears in a child's log at warn and above, by message. */
export function warningsByMessage(lines: readonly LogLine[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of lines) {
    if (line.level < logLevels.warn) continue;
    counts[line.msg] = (counts[line.msg] ?? 0) + 1;
  }
  return counts;
}
