/**
 * A worker child process (`node --import tsx bench/worker-process.ts <config json>`): prepares
 * Causeway's or the floor's worker, starts it when the orchestrator says "go", reports handler
 * counts every 5 ms, and on "stop" stops it and sends back the latencies and stalls.
 */
import { now } from './clock';
import { loadSystem } from './load-system';
import type { WorkerHooks } from './system';
import {
  type ChildMessage,
  type ParentMessage,
  type Stall,
  stallMs,
  type WorkerProcessConfig,
} from './worker-protocol';

const config = JSON.parse(process.argv[2] as string) as WorkerProcessConfig;
if (process.env.BENCH_TRACER === 'drop') (await import('./drop-tracer')).registerDroppingTracer();
if (process.env.BENCH_TRACER === 'context')
  (await import('./drop-tracer')).registerContextManager();
if (process.env.BENCH_TRACER === 'app-span') (await import('./drop-tracer')).registerAppSpans();
if (process.env.BENCH_TRACER === 'context-active')
  (await import('./drop-tracer')).registerActiveContextManager();
const send = (message: ChildMessage, callback?: () => void) =>
  process.send?.(message, undefined, {}, callback);

let count = 0;
let steps = 0;
let firstStart: number | null = null;
let lastStart: number | null = null;
const latencies: number[] = [];
const stalls: Stall[] = [];

const handlerStarted = (): number => {
  const t = now();
  if (lastStart !== null && t - lastStart > stallMs) {
    stalls.push({ ms: Math.round(t - lastStart), atCount: count });
  }
  firstStart ??= t;
  lastStart = t;
  return t;
};

const hooks: WorkerHooks = {
  onJob(input) {
    const t = handlerStarted();
    if (typeof input.t === 'number') latencies.push(t - input.t);
    count += 1;
  },
  onStep() {
    handlerStarted();
    steps += 1;
  },
  onWorkflowDone() {
    count += 1;
  },
};

const system = await loadSystem(config.spec);
const worker = await system.worker(config.url, config.mode, hooks);
let progressTimer: NodeJS.Timeout | null = null;
let lastSent = -1;

process.on('message', async (message: ParentMessage) => {
  try {
    if (message.type === 'go') {
      await worker.start();
      send({ type: 'started', startedAt: now() });
      progressTimer = setInterval(() => {
        if (count === lastSent) return;
        lastSent = count;
        send({ type: 'progress', count, steps });
      }, 5);
    } else if (message.type === 'stop') {
      if (progressTimer !== null) clearInterval(progressTimer);
      await Promise.race([worker.stop(), new Promise((resolve) => setTimeout(resolve, 10_000))]);
      send({ type: 'final', count, steps, latencies, firstStart, stalls }, () => process.exit(0));
    }
  } catch (error) {
    send({ type: 'error', message: String(error instanceof Error ? error.stack : error) });
  }
});
send({ type: 'ready' });
