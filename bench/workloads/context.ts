import type pg from 'pg';
import { now, sleep } from '../clock';
import type { Mode, System, SystemSpec } from '../system';

/** Everything one run of one workload needs; each run has its own fresh database. */
export interface RunContext {
  readonly system: System;
  readonly spec: SystemSpec;
  readonly url: string;
  /** The orchestrator's own connections to the run's database. */
  readonly pool: pg.Pool;
  readonly n: number;
  /** W1a: concurrent producers. */
  readonly producers: number;
  /** W1b and pre-submitting: workflows per batch call. */
  readonly batch: number;
  /** W2/W4: worker processes. */
  readonly procs: number;
  /** W3: gap between submits. */
  readonly intervalMs: number;
  /** w2h: finished workflows already in the tables. */
  readonly history: number;
  readonly timeoutMs: number;
}

/** What a workload measured; `value` is workflows/s, or the p50 pickup latency in ms for W3. */
export interface Measurement {
  readonly metric: string;
  readonly value: number;
  readonly verified: boolean;
  readonly problems: readonly string[];
  readonly [detail: string]: unknown;
}

/** Polls the database every 5 ms until `expected` workflows finished successfully. */
export async function waitForDatabase(
  context: RunContext,
  mode: Mode,
  expected: number,
  deadline: number,
): Promise<{ at: number; error: string | null }> {
  for (;;) {
    const counts = await context.system.counts(context.pool, mode);
    const at = now();
    if (counts.open === 0 && counts.done >= expected) return { at, error: null };
    if (counts.open === 0 && counts.failed > 0) {
      return { at, error: `${counts.failed} workflows finished unsuccessfully` };
    }
    if (at > deadline) return { at, error: `timed out with ${counts.done}/${expected} done` };
    await sleep(5);
  }
}
