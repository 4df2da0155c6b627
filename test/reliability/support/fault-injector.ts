/**
 * Random worker faults while a scenario's load runs: every `killEveryMs` (±50 %) a random
 * running worker is SIGKILLed and respawned; every `pauseEveryMs` (±50 %) another is
 * SIGSTOPped for a random time in `pauseMs` (past the lease length sometimes), then SIGCONT.
 * A seeded generator picks, so a failing run can be repeated with its seed.
 */
import { createHash } from 'node:crypto';
import { sleepUnlessAborted } from './sleep-unless-aborted';
import type { WorkerPool } from './worker-pool';

export interface FaultOptions {
  readonly killEveryMs: number;
  readonly pauseEveryMs: number;
  readonly pauseMs: readonly [number, number];
  readonly leaseMs: number;
  readonly seed: number;
}

export interface FaultCounts {
  readonly kills: number;
  readonly pauses: number;
  /** Pauses longer than the lease: their leases expire while the process is stopped. */
  readonly pausesOverLease: number;
}

export interface FaultRun {
  /**
   * Ends the faults: running pauses are continued at once, and one last worker is killed and
   * respawned; resolves when every worker runs.
   */
  stop(): Promise<FaultCounts>;
}

/** A deterministic stream in [0, 1): the n-th number hashes (seed, n). */
export function seededRandom(seed: number): () => number {
  let n = 0;
  return () => createHash('sha256').update(`${seed}:${n++}`).digest().readUInt32BE(0) / 2 ** 32;
}

export function injectFaults(pool: WorkerPool, options: FaultOptions): FaultRun {
  const random = seededRandom(options.seed);
  const done = new AbortController();
  const counts = { kills: 0, pauses: 0, pausesOverLease: 0 };
  const pick = (): number | undefined => {
    const slots = pool.runningSlots();
    // Keep one worker running at all times, so the load never stalls for want of a worker.
    if (slots.length <= 1) return undefined;
    return slots[Math.floor(random() * slots.length)];
  };
  const every = (ms: number) => ms * (0.5 + random());
  const wait = (ms: number) => sleepUnlessAborted(ms, done.signal);

  const kills = (async () => {
    while (!done.signal.aborted) {
      await wait(every(options.killEveryMs));
      const slot = done.signal.aborted ? undefined : pick();
      if (slot === undefined) continue;
      counts.kills += 1;
      await pool.killAndRespawn(slot);
    }
  })();
  const pauses = (async () => {
    while (!done.signal.aborted) {
      await wait(every(options.pauseEveryMs));
      const slot = done.signal.aborted ? undefined : pick();
      if (slot === undefined) continue;
      const [min, max] = options.pauseMs;
      const ms = Math.round(min + random() * (max - min));
      counts.pauses += 1;
      if (ms > options.leaseMs) counts.pausesOverLease += 1;
      await pool.pause(slot, ms, done.signal);
    }
  })();
  return {
    async stop() {
      done.abort();
      await Promise.all([kills, pauses]);
      // The last fault: a worker killed in the middle of its work, so the drain after the
      // faults has expired leases to recover, not only a quiet queue.
      const slot = pick();
      if (slot !== undefined) {
        counts.kills += 1;
        await pool.killAndRespawn(slot);
      }
      return { ...counts };
    },
  };
}
