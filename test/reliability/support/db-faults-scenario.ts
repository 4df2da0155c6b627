import { setTimeout as sleep } from 'node:timers/promises';
import { createEngine } from '@causeway/engine';
import { pino } from 'pino';
import type { FixtureProcess } from '../../api/fixtures/processes';
import { query } from '../../helpers/engine';
import { waitFor } from '../../helpers/wait-for';
import {
  type FinalState,
  finalState,
  overdueLeases,
  retrying,
  succeededEdges,
  unfinishedWorkflows,
} from './db-faults-checks';
import { ApiLoad } from './db-faults-load';
import { startApiProcess, startWorkerProcess } from './db-faults-processes';
import { type ProcessReport, processReport } from './db-faults-report';
import { faultChain, faultHold } from './db-faults-workflows';

/**
 * The scenario that PostgreSQL restarts and terminated backends share: worker processes and
 * an API process under a steady submit load, a fault injected while it runs, then the load
 * drained and everything the database and the processes' logs say collected.
 */

/** One window of a fault: from its start to the moment the database was usable again. */
export interface FaultWindow {
  readonly startedAt: number;
  readonly backAt: number;
  /** From `backAt` to the next step that finished, ms. */
  readonly resumeMs: number;
}

/** The processes and the load of a scenario. */
export interface ScenarioLoad {
  readonly workers: number;
  readonly concurrency: number;
  readonly leaseMs: number;
  readonly pollMs: number;
  readonly submitsPerSecond: number;
  readonly stepMs: number;
  /** Load before the fault. */
  readonly warmupMs: number;
}

/** The short versions' load (seconds), and the long ones'. */
export const shortLoad: ScenarioLoad = {
  workers: 2,
  concurrency: 4,
  leaseMs: 2_000,
  pollMs: 500,
  submitsPerSecond: 10,
  stepMs: 20,
  warmupMs: 1_500,
};
export const longLoad: ScenarioLoad = {
  workers: 3,
  concurrency: 4,
  leaseMs: 3_000,
  pollMs: 500,
  submitsPerSecond: 15,
  stepMs: 20,
  warmupMs: 5_000,
};

export interface ScenarioOptions extends ScenarioLoad {
  readonly databaseUrl: string;
  /** `fault-hold` workflows running when the fault starts (their lease is given up). */
  readonly holds?: number;
  /**
   * Injects the fault while the load runs; returns its windows (performance.now() times),
   * each measured with `resumed` (from now to the next step that finishes) once it is over.
   */
  readonly fault: (resumed: () => Promise<number>) => Promise<readonly FaultWindow[]>;
}

export interface ScenarioResult {
  readonly windows: readonly FaultWindow[];
  readonly submitted: number;
  readonly holds: number;
  readonly answers: Record<string, number>;
  readonly unexpectedAnswers: Record<string, number>;
  readonly final: FinalState;
  /** Lease samples that found a lease expired more than the grace ago, outside the windows. */
  readonly overdueSamples: number;
  /** The most overdue lease seen outside the windows' grace, ms. */
  readonly maxOverdueMs: number;
  readonly processes: readonly ProcessReport[];
  readonly durationMs: number;
}

/**
 * An expired lease is swept within this long once the database is back: the sweeper's
 * longest reconnect wait (5 s), its interval and slack for a loaded machine.
 */
export const sweepGraceMs = 7_000;

export async function runUnderFault(options: ScenarioOptions): Promise<ScenarioResult> {
  const startedAt = performance.now();
  const { databaseUrl } = options;
  const holds = options.holds ?? 0;
  const engine = createEngine({
    databaseUrl,
    workflows: [faultChain, faultHold],
    logger: pino({ level: 'silent' }),
  });
  await engine.migrate();

  const workers = Array.from({ length: options.workers }, () =>
    startWorkerProcess(databaseUrl, {
      load: 'chain',
      leaseMs: options.leaseMs,
      pollMs: options.pollMs,
      concurrency: options.concurrency,
      sweeper: true,
    }),
  );
  const api = startApiProcess(databaseUrl);
  await Promise.all(workers.map((worker) => worker.ready(60_000)));
  const { url } = await api.ready(60_000);
  const load = new ApiLoad(url as string, options);
  load.start();
  const watcher = watchLeases(databaseUrl);
  await sleep(options.warmupMs);
  await waitFor(async () => (await succeededEdges(databaseUrl)) > 0, {
    timeoutMs: 30_000,
    description: 'the load running before the fault',
  });

  const children: [string, FixtureProcess][] = [
    ...workers.map((worker, index): [string, FixtureProcess] => [`worker ${index + 1}`, worker]),
    ['api', api],
  ];
  const holdKeys = Array.from({ length: holds }, (_, n) => `hold-${n}`);
  for (const [n, key] of holdKeys.entries()) {
    await engine.submit('fault-hold', { n }, { idempotencyKey: key });
  }
  await waitFor(async () => (await leasedHolds(databaseUrl)) === holds, {
    timeoutMs: 30_000,
    description: 'the holds running',
  });
  await engine.close();
  let windows: readonly FaultWindow[];
  try {
    windows = await options.fault(() => timeToResume(databaseUrl));
    await load.stop();
    await waitFor(async () => (await unfinishedWorkflows(databaseUrl)) === 0, {
      timeoutMs: 120_000,
      intervalMs: 250,
      description: 'every submitted workflow finished',
    });
  } catch (error) {
    // What the processes said is what explains a scenario that did not recover.
    const said = children.map(([name, child]) => {
      const report = processReport(name, child);
      const exit = report.running ? '' : `, its last words:\n${lastWords(child)}`;
      return `${name} (running ${report.running}): ${JSON.stringify(report.warnings)}${exit}`;
    });
    throw new Error(
      `${(error as Error).message}
answers: ${JSON.stringify(load.answers)}
${said.join('\n')}`,
      { cause: error },
    );
  }
  const samples = await watcher.stop();
  const outside = samples.filter(
    (sample) =>
      !windows.some(
        (window) => sample.at >= window.startedAt && sample.at <= window.backAt + sweepGraceMs,
      ),
  );
  return {
    windows,
    submitted: load.submitted,
    holds,
    answers: load.answers,
    unexpectedAnswers: load.unexpectedAnswers(),
    final: await finalState(databaseUrl, [...load.accepted.keys(), ...holdKeys]),
    overdueSamples: outside.filter((sample) => sample.overdueMs > sweepGraceMs).length,
    maxOverdueMs: Math.max(0, ...outside.map((sample) => sample.overdueMs)),
    processes: children.map(([name, child]) => processReport(name, child)),
    durationMs: Math.round(performance.now() - startedAt),
  };
}

async function leasedHolds(databaseUrl: string): Promise<number> {
  const [row] = await query<{ n: number }>(
    databaseUrl,
    `select count(*)::int as n from causeway_tasks where step = 'hold' and state = 'leased'`,
  );
  return row?.n ?? 0;
}

/** What a child printed that is not a log line (a crash's stack), its end. */
function lastWords(child: FixtureProcess): string {
  const text = child
    .output()
    .split('\n')
    .filter((line) => !line.startsWith('{'))
    .join('\n');
  return text.slice(-2_000);
}

/** From now to the next step that finishes (the load keeps making work), ms. */
async function timeToResume(databaseUrl: string): Promise<number> {
  const from = performance.now();
  const before = await retrying(() => succeededEdges(databaseUrl));
  await waitFor(async () => (await retrying(() => succeededEdges(databaseUrl))) > before, {
    timeoutMs: 60_000,
    intervalMs: 50,
    description: 'processing resumed',
  });
  return Math.round(performance.now() - from);
}

interface LeaseSample {
  readonly at: number;
  readonly overdueMs: number;
}

/** Samples the most overdue lease every 250 ms (a sample fails while the database is away). */
function watchLeases(databaseUrl: string): { stop(): Promise<LeaseSample[]> } {
  const samples: LeaseSample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const at = performance.now();
      try {
        const { overdueMs } = await overdueLeases(databaseUrl, 0);
        samples.push({ at, overdueMs });
      } catch {
        // The database is away: nothing to sample.
      }
      await sleep(250);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return samples;
    },
  };
}
