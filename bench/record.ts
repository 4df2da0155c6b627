import type { LatencyStats } from './stats';
import type { SystemName } from './system';
import type { WorkloadId } from './workloads';

/** One JSON line of bench/results/<stamp>.json: one system × one workload × one repetition. */
export interface RunRecord {
  readonly stamp: string;
  readonly date: string;
  readonly system: SystemName;
  readonly label: string;
  readonly version: string;
  readonly config: Readonly<Record<string, unknown>>;
  readonly workload: WorkloadId;
  /** The table row this run belongs to, e.g. `w2 2×10`. */
  readonly case: string;
  readonly rep: number;
  readonly n: number;
  readonly procs: number | undefined;
  readonly concurrency: number;
  readonly history: number | undefined;
  readonly metric?: string;
  readonly value?: number;
  readonly latency?: LatencyStats;
  readonly verified: boolean;
  readonly problems: readonly string[];
  readonly error?: string;
  readonly server: { kind: string; version: string; settings: Readonly<Record<string, string>> };
  readonly loadavgBefore: readonly number[];
  readonly node: string;
  readonly [detail: string]: unknown;
}
