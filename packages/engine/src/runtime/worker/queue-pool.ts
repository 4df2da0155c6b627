import type { Attempt } from './executor';
import { AdaptivePrefetch } from './prefetch';
import { Wakeup } from './wakeup';

/**
 * One queue's bounded pool in a worker (R32): its slots, the claimed attempts waiting for one
 * (prefetch), the attempts whose results are being written, and what claims in flight and
 * results about to chain have reserved. It counts; the worker claims, starts and renews.
 */
export class QueuePool {
  /** Wakes this queue's claim loop: LISTEN/NOTIFY, a freed slot, or stop. */
  readonly wakeup = new Wakeup();
  /** Attempts of this queue executing now. */
  private running = 0;
  /** Claimed attempts waiting for a slot (prefetch). */
  private waiting: Attempt[] = [];
  /** Attempts whose handler returned and whose result is being written. */
  private readonly writing = new Set<Attempt>();
  /** Slots a claim in flight may fill (so two claims never overfill the pool). */
  private reserved = 0;
  /**
   * Slots held for the steps that results being written may make ready, so the settle can
   * lease those steps at once (chained) instead of the claim loop filling every freed slot
   * with new work first. A result holds one in each queue this worker serves that has a step
   * running after its step; released once the result is written.
   */
  private chainHeld = 0;
  /**
   * The last claim found fewer ready tasks than it wanted, with nothing announced since: a
   * finished step does not wake the claim loop (new work announces itself, and the loop still
   * polls).
   */
  drained = false;
  /** Wake-ups received, so a claim can tell whether work was announced meanwhile. */
  private announcements = 0;
  /** A fixed prefetch, or one that adapts to the handlers' pace. */
  private readonly prefetch: number | AdaptivePrefetch;

  constructor(
    readonly queue: string,
    /** Concurrent attempts (R32). */
    readonly limit: number,
    prefetch: number | undefined,
  ) {
    this.prefetch = prefetch ?? new AdaptivePrefetch(limit);
  }

  /** Claimed tasks the queue may hold waiting for a slot now. */
  get prefetchLimit(): number {
    return typeof this.prefetch === 'number' ? this.prefetch : this.prefetch.limit;
  }

  /** Wake-ups received so far; a claim compares it before and after. */
  get announced(): number {
    return this.announcements;
  }

  /**
   * How many tasks a claim may take now. Running, waiting and being-claimed attempts fill the
   * pool plus prefetch. A finished handler frees its slot before its result is written, so
   * the next claim overlaps that write; but results waiting to be written count against the
   * claims beyond a pool's worth, or beyond the prefetch when that is larger. So a worker
   * never holds more than pool + prefetch + max(pool, prefetch) leases: twice the pool for
   * slow handlers (no prefetch), and for fast ones results may wait in batches as large as
   * the claims, so that they are written in statements as large as the claims too.
   */
  freeSlots(): number {
    const held = this.running + this.waiting.length + this.reserved + this.chainHeld;
    const unwritten = this.writing.size;
    const prefetch = this.prefetchLimit;
    return this.limit + prefetch - held - Math.max(0, unwritten - Math.max(this.limit, prefetch));
  }

  /** Reserves `slots` for a claim or a chain in flight (negative: gives them back). */
  reserve(slots: number): void {
    this.reserved += slots;
  }

  /** A result being written holds a slot for a step it may make ready here. */
  hold(): void {
    this.chainHeld += 1;
  }

  /** Gives back a slot `hold` took. */
  releaseHold(): void {
    this.chainHeld -= 1;
  }

  /** Work was announced (LISTEN/NOTIFY): the claim loop looks at once. */
  announce(): void {
    this.announcements += 1;
    this.wake();
  }

  /** Work may be ready: the claim loop looks at once, even if its last claim found none. */
  wake(): void {
    this.drained = false;
    this.wakeup.wake();
  }

  /** A slot may be free: the claim loop looks, unless its last claim found the queue empty. */
  wakeUnlessDrained(): void {
    if (!this.drained) this.wakeup.wake();
  }

  /** Claimed attempts wait for a slot. */
  enqueue(attempts: readonly Attempt[]): void {
    this.waiting.push(...attempts);
  }

  /** The next waiting attempt to start, while a slot is free. */
  nextToStart(): Attempt | undefined {
    while (this.running < this.limit && this.waiting.length > 0) {
      const attempt = this.waiting.shift() as Attempt;
      // A prefetched lease that was lost (or cancelled) while waiting is not run.
      if (!attempt.aborted) return attempt;
    }
    return undefined;
  }

  /** Takes every waiting attempt out of the pool (shutdown hands them back). */
  takeWaiting(): Attempt[] {
    const waiting = this.waiting;
    this.waiting = [];
    return waiting;
  }

  /** An attempt took a slot. */
  started(): void {
    this.running += 1;
  }

  /** An attempt's handler returned after `durationMs`: its slot is free, its result being written. */
  returned(attempt: Attempt, durationMs: number): void {
    if (this.prefetch instanceof AdaptivePrefetch) this.prefetch.record(durationMs);
    this.running -= 1;
    this.writing.add(attempt);
  }

  /** An attempt's result is written (or given up on). */
  written(attempt: Attempt): void {
    this.writing.delete(attempt);
  }

  /** Whether the attempt's handler returned and its result is being written. */
  isWriting(attempt: Attempt): boolean {
    return this.writing.has(attempt);
  }

  /** Claimed attempts waiting for a slot, oldest first. */
  waitingAttempts(): readonly Attempt[] {
    return this.waiting;
  }

  /** Attempts whose result is being written. */
  writingAttempts(): ReadonlySet<Attempt> {
    return this.writing;
  }
}
