/** How long a prefetched task may expect to wait for a slot, at the handlers' recent pace. */
export const prefetchWindowMs = 10;
/**
 * Most tasks a queue may hold waiting, per slot of its pool, when prefetch adapts: it binds
 * only for handlers faster than a ninth of `prefetchWindowMs`, and bounds what waits if their
 * pace suddenly drops. Claims and results then travel in batches of up to ten pools, so that
 * for the fastest handlers each statement's round trip is shared by many tasks.
 */
export const prefetchPerSlot = 9;
/** Weight of the newest handler duration in the running average. */
const smoothing = 0.2;

/**
 * A queue's prefetch when the worker was not given a fixed one: as many claimed tasks waiting
 * for a slot as its pool starts within `prefetchWindowMs` at the pace of its recent handlers,
 * and at most `prefetchPerSlot` per slot. Slow handlers get none, since a waiting task sits on
 * a lease another worker might run at once; fast ones get enough that claims and results
 * travel in batches of several pools (as graphile-worker's `localQueue` does when tuned, with
 * 5 pools at its tuned preset).
 * Before any handler has finished, there is none.
 */
export class AdaptivePrefetch {
  private averageMs: number | null = null;

  constructor(private readonly concurrency: number) {}

  /** A handler of this queue ran for `durationMs` (wall time, start to return). */
  record(durationMs: number): void {
    const duration = Math.max(0, durationMs);
    this.averageMs =
      this.averageMs === null ? duration : this.averageMs + smoothing * (duration - this.averageMs);
  }

  get limit(): number {
    if (this.averageMs === null) return 0;
    const cap = prefetchPerSlot * this.concurrency;
    // A pool of c slots starts about c tasks per average handler duration.
    const startedInWindow = (this.concurrency * prefetchWindowMs) / Math.max(this.averageMs, 1e-3);
    return Math.min(cap, Math.floor(startedInWindow));
  }
}
