import type { Mode, SystemSpec } from './system';

/** What the orchestrator passes to `worker-process.ts` (as JSON in argv[2]). */
export interface WorkerProcessConfig {
  readonly spec: SystemSpec;
  readonly url: string;
  readonly mode: Mode;
  readonly index: number;
}

/** A pause of more than `stallMs` between two consecutive handler starts. */
export interface Stall {
  readonly ms: number;
  readonly atCount: number;
}

export const stallMs = 100;

export type ParentMessage = { readonly type: 'go' } | { readonly type: 'stop' };

export type ChildMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'started'; readonly startedAt: number }
  | { readonly type: 'progress'; readonly count: number; readonly steps: number }
  | {
      readonly type: 'final';
      readonly count: number;
      readonly steps: number;
      /** W3: handler start minus the `t` in the input, in ms, per job. */
      readonly latencies: readonly number[];
      readonly firstStart: number | null;
      readonly stalls: readonly Stall[];
    }
  | { readonly type: 'error'; readonly message: string };
