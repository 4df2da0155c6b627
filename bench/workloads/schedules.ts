import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { backendCpu, cpuSecondsBetween } from '../backend-cpu';
import { now, sleep } from '../clock';
import {
  type CpuSample,
  engineApplicationPrefix,
  type ScheduleChildMessage,
  type ScheduleProcessConfig,
  scheduledWorkflow,
} from '../schedule-protocol';
import { repoRoot } from '../versions';
import { cpuProfileArgs } from '../workers';
import type { Measurement, RunContext } from './context';
import { readTicks } from './schedule-ticks';

const childFile = fileURLToPath(new URL('../schedule-process.ts', import.meta.url));
const minuteMs = 60_000;
/** The measured window opens this long before its first tick, so each minute holds one tick. */
const leadMs = 5_000;
/** And no sooner than this after the last engine is ready (its start-up stays outside). */
const settleMs = 15_000;
/** The quiet part of each measured minute, after the tick's work: [tick + 25 s, tick + 55 s). */
const quiet = { fromMs: 25_000, toMs: 55_000 } as const;

interface EngineChild {
  readonly child: ChildProcess;
  readonly ready: Promise<{ at: number; startupCpuUs: number }>;
  readonly final: Promise<readonly CpuSample[] | null>;
  readonly exit: Promise<void>;
  exited: boolean;
}

/**
 * W5: `engines` processes, each an engine declaring the same `n` schedules on `* * * * *`
 * (UTC, catchUp latest) with one worker, whose scheduler submits the ticks' workflows to a
 * queue none of them serves. After the last engine is ready and has settled, the window is
 * `minutes` whole minutes that start 5 s before a tick, so it holds exactly `minutes` ticks and
 * their work. Reported: the engines' CPU (process.cpuUsage, all threads, everything the
 * engine does: scheduler, sweeper, polls) per minute summed over the engines, and apart the
 * rate of each minute's quiet part (25–55 s after its tick) scaled to a minute, so total −
 * quiet is what the ticks cost; the same for the engines' PostgreSQL backends from /proc; and
 * from the database, each tick's lateness and that each schedule has one workflow per tick.
 */
export async function runSchedules(context: RunContext): Promise<Measurement> {
  const { spec, n, engines, minutes, pool } = context;
  if (spec.kind !== 'causeway') throw new Error('w5 measures Causeway only');
  const children = Array.from({ length: engines }, (_, index) =>
    spawnEngine({ spec, url: engineUrl(context.url, index), schedules: n, index }),
  );
  const backends = backendCpu(pool, engineApplicationPrefix);
  try {
    const readyDeadline = now() + context.timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const readies = await Promise.race([
      Promise.all(children.map((c) => c.ready)),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error('the engines were not ready in time')),
          context.timeoutMs,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    const readyAt = Math.max(...readies.map((r) => r.at));
    const firstTick = Math.ceil((readyAt + settleMs) / minuteMs) * minuteMs;
    const windowStart = firstTick - leadMs;
    const windowEnd = windowStart + minutes * minuteMs;
    const ticks = Array.from({ length: minutes }, (_, m) => firstTick + m * minuteMs);
    for (let next = now(); now() < windowEnd + 1_000; next += 1_000) {
      if (children.some((c) => c.exited)) throw new Error('an engine process exited');
      if (now() > readyDeadline + (minutes + 2) * minuteMs) throw new Error('w5 overran');
      await backends.sample();
      await sleep(next + 1_000 - now());
    }
    const finals = await stopEngines(children);
    if (finals.some((final) => final === null)) throw new Error('an engine sent no CPU samples');
    const series = finals as (readonly CpuSample[])[];
    const nodeIn = (from: number, to: number) =>
      series.reduce((sum, samples) => sum + cpuSecondsBetween(samples, from, to), 0);
    const dbIn = (from: number, to: number) => cpuSecondsBetween(backends.readings, from, to);
    const perMinute = (cpuIn: (from: number, to: number) => number) => {
      const minutesCpu = ticks.map((tick) => cpuIn(tick - leadMs, tick - leadMs + minuteMs));
      const quietCpu = ticks.reduce(
        (s, tick) => s + cpuIn(tick + quiet.fromMs, tick + quiet.toMs),
        0,
      );
      const total = cpuIn(windowStart, windowEnd) / minutes;
      const quietPerMinute = (quietCpu / (minutes * (quiet.toMs - quiet.fromMs))) * minuteMs;
      return { total, quietPerMinute, ticks: total - quietPerMinute, minutes: minutesCpu };
    };
    const node = perMinute(nodeIn);
    const db = backends.available() ? perMinute(dbIn) : null;
    const report = await readTicks(pool, scheduledWorkflow.name, n, ticks);
    const problems = [...report.problems];
    if (!Number.isFinite(node.total))
      problems.push('the engines CPU samples do not cover the window');
    return {
      metric: 'Node CPU s/min (all engines)',
      value: node.total,
      schedules: n,
      engines,
      minutes,
      window: {
        start: new Date(windowStart).toISOString(),
        end: new Date(windowEnd).toISOString(),
      },
      nodeCpu: {
        ...node,
        perEngine: series.map(
          (samples) => cpuSecondsBetween(samples, windowStart, windowEnd) / minutes,
        ),
        startupPerEngine: readies.map((r) => r.startupCpuUs / 1e6),
      },
      dbCpu: db === null ? null : { ...db, backendsSeen: backends.backendsSeen() },
      /** µs of Node CPU per schedule and tick beyond the quiet rate. */
      nodeUsPerScheduleTick: (node.ticks * 1e6) / n,
      lateness: report.lateness,
      ticks: report.ticks,
      earlierTicks: report.earlierTicks,
      verified: problems.length === 0,
      problems,
      checks: report.checks,
    };
  } finally {
    for (const c of children) if (!c.exited) c.child.kill('SIGKILL');
  }
}

/** The run's database URL with the engine's application_name, so its backends can be found. */
function engineUrl(url: string, index: number): string {
  const parsed = new URL(url);
  parsed.searchParams.set('application_name', `${engineApplicationPrefix}${index}`);
  return parsed.toString();
}

function spawnEngine(config: ScheduleProcessConfig): EngineChild {
  const child = fork(childFile, [JSON.stringify(config)], {
    cwd: repoRoot,
    execArgv: ['--import', 'tsx', '--no-warnings', ...cpuProfileArgs()],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let onReady!: (ready: { at: number; startupCpuUs: number }) => void;
  let onFailed!: (error: Error) => void;
  let onFinal!: (samples: readonly CpuSample[] | null) => void;
  const engine: EngineChild = {
    child,
    exited: false,
    ready: new Promise((resolve, reject) => {
      onReady = resolve;
      onFailed = reject;
    }),
    final: new Promise((resolve) => {
      onFinal = resolve;
    }),
    exit: new Promise((resolve) => child.once('exit', () => resolve())),
  };
  // Handled where it is awaited; a rejection before then must not end the process.
  engine.ready.catch(() => {});
  child.on('message', (message: ScheduleChildMessage) => {
    if (message.type === 'ready') onReady(message);
    else if (message.type === 'final') onFinal(message.samples);
    else process.stderr.write(`[engine ${config.index}] ${message.message}\n`);
  });
  child.on('exit', (code) => {
    engine.exited = true;
    onFailed(new Error(`engine ${config.index} exited before it was ready (code ${code})`));
    onFinal(null);
  });
  return engine;
}

/** Asks every engine to stop and waits for it to exit; kills those still running after 30 s. */
async function stopEngines(
  children: readonly EngineChild[],
): Promise<(readonly CpuSample[] | null)[]> {
  for (const c of children) if (!c.exited) c.child.send({ type: 'stop' });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(children.map((c) => c.exit)),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 30_000);
    }),
  ]);
  clearTimeout(timer);
  for (const c of children) if (!c.exited) c.child.kill('SIGKILL');
  return Promise.all(children.map((c) => c.final));
}
