/**
 * A worker process of the database-fault scenarios: an engine and one worker, its pino log
 * (info and up) on stdout for the parent to count reconnects and errors in. Configured by
 * environment: see `workerEnv` in db-faults-processes.ts.
 */
import { createEngine } from '@causeway/engine';
import type { ScheduleDefinition, WorkflowDefinition } from '@causeway/workflow';
import { pino } from 'pino';
import { reportReady, untilStopped } from '../../api/fixtures/child-lifecycle';
import {
  allSkewWorkflows,
  faultChain,
  faultHold,
  skewClocks,
  skewSchedule,
} from './db-faults-workflows';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
};
const load = env('FAULTS_LOAD');
const clock = skewClocks.find((name) => `skew:${name}` === load);
if (load !== 'chain' && clock === undefined) throw new Error(`unknown FAULTS_LOAD ${load}`);
// biome-ignore lint/suspicious/noExplicitAny: each definition has its own input schema type.
const workflows: WorkflowDefinition<any>[] =
  clock === undefined ? [faultChain, faultHold] : allSkewWorkflows;
const schedules: ScheduleDefinition[] = clock === undefined ? [] : [skewSchedule(clock)];

const engine = createEngine({
  databaseUrl: env('CAUSEWAY_CHILD_DATABASE_URL'),
  workflows,
  schedules,
  logger: pino({ level: 'info' }),
  leaseMs: Number(env('FAULTS_LEASE_MS')),
  pollIntervalMs: Number(env('FAULTS_POLL_MS')),
  sweepIntervalMs: 200,
  poolSize: 4,
});
const worker = await engine.startWorker({
  // A skew worker serves its clock's queue only (its clock makes that queue's decisions),
  // and claims no more than it runs: a step's timings count from its claim.
  ...(clock === undefined ? {} : { queues: [`q-${clock}`], prefetch: 0 }),
  concurrency: Number(env('FAULTS_CONCURRENCY')),
  sweeper: env('FAULTS_SWEEPER') === '1',
});
untilStopped(async () => {
  await worker.stop({ drainMs: 2_000 });
  await engine.close();
});
reportReady({ holder: engine.holder });
