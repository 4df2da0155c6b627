import { leaseRenewMany } from '../../db/lease/lease-renew';
import { taskGet } from '../../db/reads/record-reads';
import type { EngineContext } from '../context';
import type { Attempt } from './executor';
import type { QueuePool } from './queue-pool';

/**
 * A worker's lease renewal (R9, R11), on its own timers: one statement every third of the
 * lease renews every lease the worker holds, and a lease it could not renew aborts its step.
 * A running step whose lease the database has not confirmed for most of its length (the
 * renewals fail or hang: the database is away) is aborted as well, a quarter of a renewal
 * interval before the lease can run out, so no handler runs on past its lease believing it holds it.
 * The clock for that is the process's monotonic one, counted from each renewal's send time:
 * the database extended the lease from a later instant, so the step stops early, never late.
 */
export class LeaseRenewal {
  private renewTimer: NodeJS.Timeout | null = null;
  private checkTimer: NodeJS.Timeout | null = null;
  /** A renewal in flight: a hanging one is not joined by another each tick. */
  private renewing = false;
  private readonly renewEveryMs: number;
  /** How often running steps' confirmations are checked; also the margin kept before expiry. */
  private readonly checkEveryMs: number;

  constructor(
    private readonly context: EngineContext,
    private readonly pools: ReadonlyMap<string, QueuePool>,
    private readonly running: ReadonlySet<Attempt>,
  ) {
    this.renewEveryMs = Math.max(50, Math.floor(context.leaseMs / 3));
    this.checkEveryMs = Math.max(10, Math.floor(this.renewEveryMs / 4));
  }

  start(): void {
    this.renewTimer = setInterval(() => void this.renew(), this.renewEveryMs);
    this.checkTimer = setInterval(() => this.abortUnconfirmed(), this.checkEveryMs);
  }

  stop(): void {
    if (this.renewTimer !== null) clearInterval(this.renewTimer);
    if (this.checkTimer !== null) clearInterval(this.checkTimer);
  }

  private async renew(): Promise<void> {
    const pools = [...this.pools.values()];
    const held = [
      ...this.running,
      ...pools.flatMap((pool) => pool.waitingAttempts()),
      ...pools.flatMap((pool) => [...pool.writingAttempts()]),
    ];
    const attempts = held.filter((attempt) => !attempt.aborted);
    if (attempts.length === 0 || this.renewing) return;
    this.renewing = true;
    const sentAt = performance.now();
    try {
      const renewed = await leaseRenewMany(
        this.context.db,
        this.context.holder,
        attempts.map((attempt) => ({ taskId: attempt.fence.taskId, epoch: attempt.fence.epoch })),
        this.context.leaseMs,
      );
      for (const attempt of attempts) {
        if (renewed.has(attempt.fence.taskId)) {
          attempt.leaseConfirmedAt = sentAt;
          continue;
        }
        // Its handler has returned, its result is written or being written (fenced on the
        // lease anyway): a result committed before the renewal's snapshot leaves nothing to
        // renew, and the attempt has not lost its lease.
        if (!this.running.has(attempt) && !this.isWaiting(attempt)) continue;
        const task = await taskGet(this.context.db, attempt.fence.taskId);
        const cancelRequested =
          task?.state === 'cancel_requested' &&
          task.leaseHolder === attempt.fence.holder &&
          task.leaseEpoch === attempt.fence.epoch;
        attempt.logger.warn(
          { cancelRequested },
          cancelRequested ? 'cancel requested: aborting the step' : 'lease lost: aborting the step',
        );
        attempt.abort(cancelRequested ? 'cancel_requested' : 'lease_lost');
      }
    } catch (error) {
      this.context.logger.warn({ err: error }, 'lease renewal failed; will retry');
    } finally {
      this.renewing = false;
    }
  }

  /** A claimed attempt still waiting for a slot of its queue's pool. */
  private isWaiting(attempt: Attempt): boolean {
    return this.pools.get(attempt.claimed.task.queue)?.waitingAttempts().includes(attempt) ?? false;
  }

  /** Aborts running steps whose lease may run out before a renewal could still confirm it. */
  private abortUnconfirmed(): void {
    const now = performance.now();
    const limitMs = this.context.leaseMs - this.checkEveryMs;
    for (const attempt of this.running) {
      const unconfirmedMs = now - attempt.leaseConfirmedAt;
      if (attempt.aborted || unconfirmedMs < limitMs) continue;
      attempt.logger.warn(
        { unconfirmedMs: Math.round(unconfirmedMs), leaseMs: this.context.leaseMs },
        'the database has not confirmed the lease in time: aborting the step',
      );
      attempt.abort('lease_lost');
    }
  }
}
