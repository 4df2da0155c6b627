/**
 * A W5 engine process (`node --import tsx bench/schedule-process.ts <config json>`): one
 * engine declaring every schedule, with one worker (the scheduler runs in it, as in any
 * sweeping worker) that serves the default queue only, so the scheduled workflows stay queued
 * and what this process spends is the engine's own idle loops plus the scheduler's. Samples
 * its own CPU (process.cpuUsage, all threads) every second and sends the samples on "stop".
 */
import { createEngine } from '@causeway/engine';
import { defaultQueue, defineWorkflow, schedule, step } from '@causeway/workflow/internal';
import { pino } from 'pino';
import { z } from 'zod';
import { benchWorkflows } from './causeway';
import { now } from './clock';
import {
  type CpuSample,
  type ScheduleChildMessage,
  type ScheduleParentMessage,
  type ScheduleProcessConfig,
  scheduledWorkflow,
  scheduleName,
} from './schedule-protocol';

const config = JSON.parse(process.argv[2] as string) as ScheduleProcessConfig;
const send = (message: ScheduleChildMessage, callback?: () => void) =>
  process.send?.(message, undefined, {}, callback);
const cpuUs = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

const scheduled = defineWorkflow({
  name: scheduledWorkflow.name,
  input: z.object({}),
  steps: { only: step({ queue: scheduledWorkflow.queue, run: () => null }) },
});
const idleHooks = { onJob() {}, onStep() {}, onWorkflowDone() {} };
const { spec } = config;
const engine = createEngine({
  databaseUrl: config.url,
  workflows: [scheduled, ...benchWorkflows(idleHooks)],
  schedules: Array.from({ length: config.schedules }, (_, i) =>
    schedule({
      name: scheduleName(i),
      workflow: scheduled,
      cron: '* * * * *',
      timezone: 'UTC',
      input: {},
      catchUp: 'latest',
    }),
  ),
  logger: pino({ level: 'silent' }),
  ...(spec.poolSize === undefined ? {} : { poolSize: spec.poolSize }),
  ...(spec.pollIntervalMs === undefined ? {} : { pollIntervalMs: spec.pollIntervalMs }),
  ...(spec.leaseMs === undefined ? {} : { leaseMs: spec.leaseMs }),
});

try {
  const worker = await engine.startWorker({
    concurrency: spec.concurrency,
    queues: [defaultQueue],
  });
  const samples: CpuSample[] = [{ t: now(), us: cpuUs() }];
  const sampler = setInterval(() => samples.push({ t: now(), us: cpuUs() }), 1_000);
  process.on('message', async (message: ScheduleParentMessage) => {
    if (message.type !== 'stop') return;
    clearInterval(sampler);
    samples.push({ t: now(), us: cpuUs() });
    try {
      await Promise.race([
        worker.stop({ drainMs: 1_000 }),
        new Promise((r) => setTimeout(r, 10_000)),
      ]);
      await engine.close();
    } catch (error) {
      send({ type: 'error', message: String(error instanceof Error ? error.stack : error) });
    }
    send({ type: 'final', samples }, () => process.exit(0));
  });
  send({ type: 'ready', at: now(), startupCpuUs: cpuUs() });
} catch (error) {
  send({ type: 'error', message: String(error instanceof Error ? error.stack : error) }, () =>
    process.exit(1),
  );
}
