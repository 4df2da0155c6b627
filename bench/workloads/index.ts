import type { RawSpec } from '../system';
import type { Measurement, RunContext } from './context';
import { runDrain } from './drain';
import { runFanOut } from './fan-out';
import { runPickup } from './pickup';
import { runSchedules } from './schedules';
import { runSubmit } from './submit';

/** `all` runs them in this order: w2k beside w2, so the runs its ratio pairs stay close. */
export const workloadIds = [
  'w1a',
  'w1b',
  'w2',
  'w2k',
  'w2h',
  'w2d',
  'w3',
  'w4',
  'w5',
  'w6',
] as const;
export type WorkloadId = (typeof workloadIds)[number];
/** What `--workload all` runs: w5 waits for real minutes, so it runs only when named. */
export const defaultWorkloadIds = workloadIds.filter((id) => id !== 'w5');

export interface Workload {
  readonly id: WorkloadId;
  readonly title: string;
  /** What `value` measures. */
  readonly unit: string;
  readonly defaultN: number;
  /** Whether `--procs` applies (worker processes). */
  readonly usesProcs: boolean;
  /** The raw SQL floor this workload is compared with, measured in the same run. */
  readonly floor: (concurrency: number) => RawSpec;
  readonly floorLabel: string;
  /** Measured for Causeway only (the floors have no delays or schedules): `--systems` skips the rest. */
  readonly causewayOnly?: boolean;
  readonly run: (context: RunContext) => Promise<Measurement>;
}

const raw = (k: number) => (concurrency: number) => ({
  kind: 'raw' as const,
  k,
  concurrency,
  notify: true,
  idlePollMs: 1_000,
});

/** A W2 variant the floors cannot run (they have no keys, no delays): Causeway only. */
const causewayOnlyDrain = (id: WorkloadId, title: string): Workload => ({
  id,
  title,
  unit: 'workflows/s',
  defaultN: 20_000,
  usesProcs: true,
  floor: raw(50),
  floorLabel: '– (Causeway only)',
  causewayOnly: true,
  run: (context) => runDrain(context, 'job'),
});

export const workloads: Readonly<Record<WorkloadId, Workload>> = {
  w1a: {
    id: 'w1a',
    title: 'W1a submit one by one (10 producers)',
    unit: 'workflows/s',
    defaultN: 20_000,
    usesProcs: false,
    floor: raw(1),
    floorLabel: 'L: INSERT + pg_notify, one statement per job',
    run: (context) => runSubmit(context, 'one-by-one'),
  },
  w1b: {
    id: 'w1b',
    title: 'W1b submit batched (1,000 per call)',
    unit: 'workflows/s',
    defaultN: 20_000,
    usesProcs: false,
    floor: raw(1),
    floorLabel: 'L: multi-row INSERT + pg_notify (1,000 per statement)',
    run: (context) => runSubmit(context, 'batched'),
  },
  w2: {
    id: 'w2',
    title: 'W2 drain one-step workflows',
    unit: 'workflows/s',
    defaultN: 20_000,
    usesProcs: true,
    floor: raw(50),
    floorLabel: 'L: raw SQL queue, claim k=50',
    run: (context) => runDrain(context, 'job'),
  },
  // Keyed by the system: its spec's `keys` (run.ts) declares the keyed workflow and submits to it.
  w2k: causewayOnlyDrain('w2k', 'W2k drain one-step workflows, every task keyed'),
  w2h: {
    id: 'w2h',
    title: 'W2h drain one-step workflows with a history of finished ones',
    unit: 'workflows/s',
    defaultN: 20_000,
    usesProcs: true,
    floor: raw(50),
    floorLabel: 'L: raw SQL queue, claim k=50',
    run: (context) => runDrain(context, 'job'),
  },
  w2d: causewayOnlyDrain('w2d', 'W2d drain one-step workflows beside delayed ones'),
  w3: {
    id: 'w3',
    title: 'W3 pickup latency, idle worker, 1 submit per 10 ms',
    unit: 'ms',
    defaultN: 500,
    usesProcs: false,
    floor: raw(1),
    floorLabel: 'L: raw SQL queue, claim k=1 (LISTEN/NOTIFY)',
    run: runPickup,
  },
  w4: {
    id: 'w4',
    title: 'W4 three-step workflows a → b → c',
    unit: 'workflows/s',
    defaultN: 2_000,
    usesProcs: true,
    floor: raw(50),
    floorLabel: 'L: raw SQL queue, claim k=50, complete + chain in one statement',
    run: (context) => runDrain(context, 'workflow'),
  },
  w5: {
    id: 'w5',
    title: 'W5 one-minute cron schedules',
    unit: 'CPU s/min',
    defaultN: 1_000,
    usesProcs: false,
    floor: raw(1),
    floorLabel: '– (Causeway only)',
    causewayOnly: true,
    run: runSchedules,
  },
  w6: {
    id: 'w6',
    title: 'W6 one step starts N one-step child workflows: their drain',
    unit: 'children/s',
    defaultN: 10_000,
    usesProcs: true,
    floor: raw(50),
    floorLabel: '– (Causeway only)',
    causewayOnly: true,
    run: runFanOut,
  },
};
