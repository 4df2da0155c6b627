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
  /** w2d: workflows submitted with a delay of a day beside the `n` to drain (they stay queued). */
  readonly delayed: number;
  /** w5: engine processes, and minute ticks measured. */
  readonly engines: number;
  readonly minutes: number;
  readonly timeoutMs: number;
  /** The PgBouncer the run's Causeway goes through (`--pgbouncer`), for its CPU. */
  readonly poolerPid: number | null;
}

/** What a workload measured; `value` is workflows/s, or the p50 pickup latency in ms for W3. */
export interface Measurement {
  readonly metric: string;
  readonly value: number;
  readonly verified: boolean;
  readonly problems: readonly string[];
  readonly [detail: string]: unknown;
}

/**
 * Polls the database every 5 ms until `expected` workflows finished successfully and only
 * `waiting` (delayed ones, w2d) are still open.
 */
export async function waitForDatabase(
  context: RunContext,
  mode: Mode,
  expected: number,
  deadline: number,
  waiting = 0,
): Promise<{ at: number; error: string | null }> {
  for (;;) {
    const counts = await context.system.counts(context.pool, mode);
    const at = now();
    if (counts.open <= waiting && counts.done >= expected) return { at, error: null };
    if (counts.open <= waiting && counts.failed > 0) {
      return { at, error: `${counts.failed} workflows finished unsuccessfully` };
    }
    if (at > deadline) return { at, error: `timed out with ${counts.done}/${expected} done` };
    await sleep(5);
  }
}
