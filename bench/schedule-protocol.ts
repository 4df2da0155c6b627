import type { CausewaySpec } from './system';

/** W5: the workflow every schedule submits; its step's queue is one no bench worker serves. */
export const scheduledWorkflow = { name: 'bench-scheduled', queue: 'bench-scheduled' } as const;

/** W5: the name of schedule `i` of `count` (the same in every engine, as one code base gives). */
export const scheduleName = (i: number): string => `bench-tick-${String(i).padStart(5, '0')}`;

/** Each engine process's connections carry this application_name (its backends are sampled). */
export const engineApplicationPrefix = 'bench-engine-';

/** What the orchestrator passes to `schedule-process.ts` (as JSON in argv[2]). */
export interface ScheduleProcessConfig {
  readonly spec: CausewaySpec;
  readonly url: string;
  readonly schedules: number;
  readonly index: number;
}

/** A cumulative CPU reading: epoch ms (clock.ts `now()`) and user + system µs so far. */
export interface CpuSample {
  readonly t: number;
  readonly us: number;
}

export type ScheduleParentMessage = { readonly type: 'stop' };

export type ScheduleChildMessage =
  | { readonly type: 'ready'; readonly at: number; readonly startupCpuUs: number }
  | { readonly type: 'final'; readonly samples: readonly CpuSample[] }
  | { readonly type: 'error'; readonly message: string };
