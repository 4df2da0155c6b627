import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { now, sleep } from './clock';
import { repoRoot } from './versions';
import type { ChildMessage, WorkerProcessConfig } from './worker-protocol';

type Final = Extract<ChildMessage, { type: 'final' }>;

/** The orchestrator's view of one worker child process. */
export interface WorkerChild {
  readonly child: ChildProcess;
  count: number;
  steps: number;
  startedAt: number | null;
  exitCode: number | null | undefined;
  readonly ready: Promise<void>;
  readonly started: Promise<void>;
  readonly final: Promise<Final | null>;
}

const workerFile = fileURLToPath(new URL('./worker-process.ts', import.meta.url));

/** BENCH_CPU_PROFILE_DIR=<dir>: each worker process writes a V8 CPU profile there (for analysis). */
export const cpuProfileArgs = (): string[] => {
  const dir = process.env.BENCH_CPU_PROFILE_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
};

/** Forks `count` worker processes (`node --import tsx bench/worker-process.ts`). */
export function spawnWorkers(
  config: Omit<WorkerProcessConfig, 'index'>,
  count: number,
): WorkerChild[] {
  return Array.from({ length: count }, (_, index) => {
    const child = fork(workerFile, [JSON.stringify({ ...config, index })], {
      cwd: repoRoot,
      execArgv: ['--import', 'tsx', '--no-warnings', ...cpuProfileArgs()],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let onReady!: () => void;
    let onReadyFailed!: (error: Error) => void;
    let onStarted!: () => void;
    let onFinal!: (final: Final | null) => void;
    const worker: WorkerChild = {
      child,
      count: 0,
      steps: 0,
      startedAt: null,
      exitCode: undefined,
      ready: new Promise((resolve, reject) => {
        onReady = resolve;
        onReadyFailed = reject;
      }),
      started: new Promise((resolve) => {
        onStarted = resolve;
      }),
      final: new Promise((resolve) => {
        onFinal = resolve;
      }),
    };
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') onReady();
      else if (message.type === 'started') {
        worker.startedAt = message.startedAt;
        onStarted();
      } else if (message.type === 'progress') {
        worker.count = message.count;
        worker.steps = message.steps;
      } else if (message.type === 'final') {
        worker.count = message.count;
        worker.steps = message.steps;
        onFinal(message);
      } else if (message.type === 'error') {
        process.stderr.write(`[worker ${index}] ${message.message}\n`);
      }
    });
    child.on('exit', (code) => {
      worker.exitCode = code;
      onReadyFailed(new Error(`worker ${index} exited before it was ready (code ${code})`));
      onStarted();
      onFinal(null);
    });
    return worker;
  });
}

export function go(workers: readonly WorkerChild[]): void {
  for (const worker of workers) worker.child.send({ type: 'go' });
}

/** Waits until the handlers together have started `expected` jobs (workflows in W4). */
export async function waitForHandlers(
  workers: readonly WorkerChild[],
  expected: number,
  deadline: number,
): Promise<string | null> {
  while (workers.reduce((sum, worker) => sum + worker.count, 0) < expected) {
    if (workers.some((worker) => worker.exitCode !== undefined)) return 'a worker process exited';
    if (now() > deadline) return 'timed out waiting for the handlers';
    await sleep(2);
  }
  return null;
}

/** Asks every worker to stop and waits for it to exit; kills those still running after 20 s. */
export async function stopWorkers(workers: readonly WorkerChild[]): Promise<(Final | null)[]> {
  const exited = workers.map(
    (worker) =>
      new Promise<void>((resolve) => {
        if (worker.exitCode !== undefined) resolve();
        else worker.child.once('exit', () => resolve());
      }),
  );
  for (const worker of workers) {
    if (worker.exitCode === undefined) worker.child.send({ type: 'stop' });
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, 20_000);
  });
  await Promise.race([Promise.all(exited), timeout]);
  clearTimeout(timer);
  for (const worker of workers) if (worker.exitCode === undefined) worker.child.kill('SIGKILL');
  return Promise.all(workers.map((worker) => worker.final));
}
