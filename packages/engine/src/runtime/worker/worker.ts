import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowDefinition } from '@causeway/workflow';
import { leaseRenewMany } from '../../db/lease/lease-renew';
import { outboxWakeup } from '../../db/notify-channels';
import { isRetryableDatabaseError } from '../../db/pg-errors';
import { taskGet } from '../../db/reads/record-reads';
import { claimReadyTasks } from '../claim/claim-ready-tasks';
import type { ClaimedTask } from '../claim/claimed-task';
import type { EngineContext } from '../context';
import type { EventRequest } from '../decision/event-request';
import { OutboxDispatcher } from '../outbox/outbox-dispatcher';
import { ResultWriter } from '../settle/result-writer';
import { downstreamQueues } from '../step-table';
import { Sweeper } from '../sweep/sweeper';
import { Attempt } from './executor';
import { AdaptivePrefetch } from './prefetch';
import { Wakeup } from './wakeup';

export interface WorkerOptions {
  /** Queues to serve; default: every queue of the engine's workflows. */
  readonly queues?: readonly string[];
  /** Concurrent attempts per queue (R32): one number for all, or per queue. */
  readonly concurrency: number | Readonly<Record<string, number>>;
  /** Most tasks claimed per statement (default: the queue's concurrency plus its prefetch). */
  readonly claimBatchSize?: number;
  /**
   * Claimed tasks a queue may hold waiting for a free slot, beyond its concurrency. Bigger
   * claims mean fewer statements per task; waiting tasks are `leased` (renewed, and handed
   * back with `worker_shutdown` at shutdown) and their attempt timeout starts when they run.
   * Default: adaptive, as many as the pool starts within about 10 ms at the pace of the
   * queue's recent handlers, at most 9 per slot; so none for slow handlers (`prefetch.ts`).
   */
  readonly prefetch?: number;
  /** Run the sweeper in this worker (default true; safe with many). */
  readonly sweeper?: boolean;
  /** Run the outbox dispatcher in this worker (default: when the engine has channels). */
  readonly outbox?: boolean;
}

export interface StopOptions {
  /** How long running steps may take to finish after their signals are aborted (R31). */
  readonly drainMs?: number;
}

export interface WorkerHandle {
  /** Graceful shutdown (R31): stop claiming, abort signals, drain, release, exit. */
  stop(options?: StopOptions): Promise<void>;
  /** Claims and runs what is ready now, once per queue (for tests and tools). */
  readonly running: ReadonlySet<Attempt>;
}

/**
 * A worker: one bounded pool per queue (R32), batch claims with SKIP LOCKED (R8), LISTEN
 * wake-ups plus polling (R5), lease renewal on its own timer (R9, R11), and the sweeper.
 */
export class Worker implements WorkerHandle {
  /** Attempts executing now. */
  readonly running = new Set<Attempt>();
  /** Claimed attempts waiting for a slot, per queue (prefetch). */
  private readonly waiting = new Map<string, Attempt[]>();
  /** Attempts whose handler returned and whose result is being written, per queue. */
  private readonly writing = new Map<string, Set<Attempt>>();
  /** Slots a claim in flight may fill, per queue (so two claims never overfill a pool). */
  private readonly reserved = new Map<string, number>();
  /**
   * Queues whose last claim found fewer ready tasks than it wanted, with nothing announced
   * since: a finished step does not wake their claim loop (new work announces itself, and the
   * loop still polls).
   */
  private readonly drained = new Set<string>();
  /**
   * Per queue: slots held for the steps that results being written may make ready, so the
   * settle can lease those steps at once (chained) instead of the claim loop filling every
   * freed slot with new work first. A result holds one in each queue this worker serves that
   * has a step running after its step; released once the result is written.
   */
  private readonly chainHeld = new Map<string, number>();
  /** The queues each such result holds a slot in, by task id. */
  private readonly holding = new Map<string, readonly string[]>();
  /** Wake-ups received per queue, so a claim can tell whether work was announced meanwhile. */
  private readonly announced = new Map<string, number>();
  private readonly resultWriter: ResultWriter;
  private readonly sweeper: Sweeper | null;
  private readonly dispatcher: OutboxDispatcher | null;
  private readonly limits: Map<string, number>;
  private readonly runningByQueue = new Map<string, number>();
  private readonly wakeups = new Map<string, Wakeup>();
  private readonly loops: Promise<void>[] = [];
  private readonly attemptsDone = new Set<Promise<void>>();
  private stopping = false;
  private renewTimer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private stopped: Promise<void> | null = null;
  /** Per queue: a fixed prefetch, or one that adapts to the handlers' pace. */
  private readonly prefetch = new Map<string, number | AdaptivePrefetch>();

  constructor(
    private readonly context: EngineContext,
    private readonly options: WorkerOptions,
  ) {
    this.resultWriter = new ResultWriter(context, {
      reserve: (requests) => this.reserveForChain(requests),
      deliver: (reserved, chained) => this.deliverChained(reserved, chained),
    });
    if (
      options.prefetch !== undefined &&
      (!Number.isInteger(options.prefetch) || options.prefetch < 0)
    ) {
      throw new RangeError(`prefetch must be a non-negative integer, got ${options.prefetch}`);
    }
    this.sweeper = options.sweeper === false ? null : new Sweeper(context);
    this.dispatcher =
      (options.outbox ?? context.channels.size > 0) ? new OutboxDispatcher(context) : null;
    const queues = options.queues ?? allQueues(context.definitions);
    this.limits = new Map(
      queues.map((queue) => {
        const limit =
          typeof options.concurrency === 'number'
            ? options.concurrency
            : options.concurrency[queue];
        if (limit === undefined || !Number.isInteger(limit) || limit < 1) {
          throw new RangeError(
            `concurrency for queue "${queue}" must be a positive integer, got ${limit}`,
          );
        }
        return [queue, limit];
      }),
    );
    for (const [queue, limit] of this.limits) {
      this.prefetch.set(queue, options.prefetch ?? new AdaptivePrefetch(limit));
    }
  }

  /** Claimed tasks the queue may hold waiting for a slot now. */
  private prefetchOf(queue: string): number {
    const prefetch = this.prefetch.get(queue) ?? 0;
    return typeof prefetch === 'number' ? prefetch : prefetch.limit;
  }

  async start(): Promise<void> {
    for (const queue of this.limits.keys()) {
      this.wakeups.set(queue, new Wakeup());
      this.runningByQueue.set(queue, 0);
      this.writing.set(queue, new Set());
      this.reserved.set(queue, 0);
    }
    this.unsubscribe = await this.context.notifier.subscribe((queue) => {
      if (queue === outboxWakeup || queue === '*') this.dispatcher?.wake();
      for (const name of queue === '*' ? this.wakeups.keys() : [queue]) {
        this.announced.set(name, (this.announced.get(name) ?? 0) + 1);
        this.drained.delete(name);
        this.wakeups.get(name)?.wake();
      }
    });
    for (const queue of this.limits.keys()) this.loops.push(this.claimLoop(queue));
    const renewEveryMs = Math.max(50, Math.floor(this.context.leaseMs / 3));
    this.renewTimer = setInterval(() => void this.renewLeases(), renewEveryMs);
    this.sweeper?.start();
    this.dispatcher?.start();
    this.context.logger.info({ queues: Object.fromEntries(this.limits) }, 'worker started');
  }

  stop(options: StopOptions = {}): Promise<void> {
    this.stopped ??= this.shutdown(options.drainMs ?? 10_000);
    return this.stopped;
  }

  private async shutdown(drainMs: number): Promise<void> {
    this.stopping = true;
    for (const wakeup of this.wakeups.values()) wakeup.wake();
    await Promise.all(this.loops);
    await this.sweeper?.stop();
    await this.dispatcher?.stop();
    // Prefetched attempts never started: hand them back at once.
    const waiting = [...this.waiting.values()].flat();
    for (const queue of this.waiting.keys()) this.waiting.set(queue, []);
    await Promise.all(waiting.map((attempt) => attempt.release()));
    for (const attempt of this.running) attempt.abort('shutdown');
    const drained = Promise.all(this.attemptsDone);
    // The budget's timer is cancelled once the race is decided: left pending, it would keep
    // the process alive for the rest of the budget after a clean stop.
    const budget = new AbortController();
    const timeout = sleep(drainMs, 'timeout' as const, { signal: budget.signal }).catch(
      () => 'cancelled' as const,
    );
    const outcome = await Promise.race([drained, timeout]);
    budget.abort();
    if (outcome === 'timeout') {
      this.context.logger.warn(
        { running: this.running.size },
        'drain budget spent; releasing what has not started an effect',
      );
      await Promise.all([...this.running].map((attempt) => attempt.release()));
    }
    if (this.renewTimer !== null) clearInterval(this.renewTimer);
    this.unsubscribe?.();
    await this.resultWriter.drain();
    this.context.logger.info('worker stopped');
  }

  private async claimLoop(queue: string): Promise<void> {
    const wakeup = this.wakeups.get(queue) as Wakeup;
    let failures = 0;
    while (!this.stopping) {
      const free = this.freeSlots(queue);
      if (free <= 0) {
        await wakeup.wait(this.context.pollIntervalMs);
        continue;
      }
      const batchSize =
        this.options.claimBatchSize ?? (this.limits.get(queue) as number) + this.prefetchOf(queue);
      const wanted = Math.min(free, batchSize);
      const announced = this.announced.get(queue) ?? 0;
      this.reserve(queue, wanted);
      try {
        const { claimed, skipped } = await this.claim(queue, wanted).finally(() =>
          this.reserve(queue, -wanted),
        );
        failures = 0;
        this.drained.delete(queue);
        this.enqueue(queue, claimed);
        if (claimed.length === wanted) continue; // there may be more
        // Work announced while this claim ran may have missed it: look again at once.
        if ((this.announced.get(queue) ?? 0) !== announced) continue;
        if (skipped === 0) this.drained.add(queue);
        // Rows skipped because their workflow was busy become claimable in a moment.
        await wakeup.wait(skipped > 0 ? 5 : this.context.pollIntervalMs);
      } catch (error) {
        failures += 1;
        this.context.logger.error({ err: error, queue }, 'claim failed');
        await wakeup.wait(Math.min(30_000, 100 * 2 ** Math.min(failures, 8)));
        if (!isRetryableDatabaseError(error) && failures > 20) {
          this.context.logger.error({ queue }, 'claims keep failing; still retrying');
        }
      }
    }
  }

  /** Starts waiting attempts while the queue has free slots (R32). */
  private pump(queue: string): void {
    const limit = this.limits.get(queue) as number;
    const waiting = this.waiting.get(queue) ?? [];
    while ((this.runningByQueue.get(queue) ?? 0) < limit && waiting.length > 0) {
      const attempt = waiting.shift() as Attempt;
      // A prefetched lease that was lost (or cancelled) while waiting is not run.
      if (attempt.aborted) continue;
      this.startAttempt(queue, attempt);
    }
  }

  /**
   * How many tasks a claim may take for a queue now. Running, waiting and being-claimed
   * attempts fill the pool plus prefetch. A finished handler frees its slot before its result
   * is written, so the next claim overlaps that write; but results waiting to be written count
   * against the claims beyond a pool's worth, or beyond the prefetch when that is larger. So
   * a worker never holds more than pool + prefetch + max(pool, prefetch) leases: twice the pool
   * for slow handlers (no prefetch), and for fast ones results wait in batches as large as the
   * claims (W2 measured 15–33 % faster than with one pool's worth, W4 unchanged).
   */
  private freeSlots(queue: string): number {
    const limit = this.limits.get(queue) as number;
    const held =
      (this.runningByQueue.get(queue) ?? 0) +
      (this.waiting.get(queue)?.length ?? 0) +
      (this.reserved.get(queue) ?? 0) +
      (this.chainHeld.get(queue) ?? 0);
    const unwritten = this.writing.get(queue)?.size ?? 0;
    const prefetch = this.prefetchOf(queue);
    return limit + prefetch - held - Math.max(0, unwritten - Math.max(limit, prefetch));
  }

  private reserve(queue: string, slots: number): void {
    this.reserved.set(queue, (this.reserved.get(queue) ?? 0) + slots);
  }

  /**
   * Slots for the steps a batch of results makes ready, taken in the settle statement itself
   * (chained): the slots its results hold (one per queue of their next steps; a result that
   * makes two steps of one queue ready chains one, the other is queued). A chained step skips
   * the queue: it runs before older queued tasks of its queue, which keeps a started workflow
   * moving, and it saves the claim of it.
   */
  private reserveForChain(requests: readonly EventRequest[]): ReadonlyMap<string, number> {
    const reserved = new Map<string, number>();
    for (const request of requests) {
      const queues = this.holding.get(request.taskId);
      if (queues === undefined) continue;
      this.releaseHold(request.taskId);
      // A stopping worker takes no new work (R31): the steps are queued for others.
      if (this.stopping) continue;
      for (const queue of queues) reserved.set(queue, (reserved.get(queue) ?? 0) + 1);
    }
    for (const [queue, slots] of reserved) this.reserve(queue, slots);
    return reserved;
  }

  /** Gives back the slots a result held for the steps it may make ready. */
  private releaseHold(taskId: string): void {
    const queues = this.holding.get(taskId);
    if (queues === undefined) return;
    this.holding.delete(taskId);
    for (const queue of queues) this.chainHeld.set(queue, (this.chainHeld.get(queue) ?? 1) - 1);
  }

  /** Releases a chain reservation and runs (or, when stopping, hands back) the chained steps. */
  private deliverChained(
    reserved: ReadonlyMap<string, number>,
    chained: readonly ClaimedTask[],
  ): void {
    for (const [queue, slots] of reserved) this.reserve(queue, -slots);
    const byQueue = new Map<string, ClaimedTask[]>();
    for (const claimed of chained) {
      const tasks = byQueue.get(claimed.task.queue) ?? [];
      tasks.push(claimed);
      byQueue.set(claimed.task.queue, tasks);
    }
    for (const [queue, claimed] of byQueue) this.enqueue(queue, claimed);
    // Slots reserved and not used are free again for the claim loops.
    for (const queue of reserved.keys()) {
      if (!this.drained.has(queue)) this.wakeups.get(queue)?.wake();
    }
  }

  /** Claimed tasks wait for a slot, and start at once where one is free. */
  private enqueue(queue: string, claimed: readonly ClaimedTask[]): void {
    if (this.stopping) {
      // A claim that committed while the worker stops: hand its tasks straight back (R31).
      for (const task of claimed) {
        const released = new Attempt(this.context, this.resultWriter, task).release();
        this.attemptsDone.add(released);
        void released.finally(() => this.attemptsDone.delete(released));
      }
      return;
    }
    const waiting = this.waiting.get(queue) ?? [];
    for (const task of claimed) waiting.push(new Attempt(this.context, this.resultWriter, task));
    this.waiting.set(queue, waiting);
    this.pump(queue);
  }

  /** One claim for a queue (the one-statement claim commits on its own). */
  private claim(
    queue: string,
    limit: number,
  ): Promise<{ claimed: readonly ClaimedTask[]; skipped: number }> {
    return claimReadyTasks(this.context.db, this.context.apply, {
      queue,
      limit,
      holder: this.context.holder,
    });
  }

  private startAttempt(queue: string, attempt: Attempt): void {
    const writing = this.writing.get(queue) as Set<Attempt>;
    this.running.add(attempt);
    this.runningByQueue.set(queue, (this.runningByQueue.get(queue) ?? 0) + 1);
    const startedAt = performance.now();
    const done = attempt
      .run()
      .then(() => {
        const prefetch = this.prefetch.get(queue);
        if (prefetch instanceof AdaptivePrefetch) prefetch.record(performance.now() - startedAt);
        // The handler returned: its slot is free while the resultWriter writes its result, so the
        // claim for it overlaps that write.
        this.running.delete(attempt);
        this.runningByQueue.set(queue, (this.runningByQueue.get(queue) ?? 1) - 1);
        writing.add(attempt);
        const { definition, step } = attempt.claimed;
        // A hold counts as a lease the pool may take. In its own queue it takes the slot this
        // handler just freed, whatever the prefetch holds; another queue may be full, so
        // there only while a slot is free.
        const next = downstreamQueues(definition, step.name).filter(
          (name) => this.limits.has(name) && (name === queue || this.freeSlots(name) > 0),
        );
        if (next.length > 0 && !this.stopping) {
          this.holding.set(attempt.fence.taskId, next);
          for (const queue of next) this.chainHeld.set(queue, (this.chainHeld.get(queue) ?? 0) + 1);
        }
        this.pump(queue);
        if (!this.drained.has(queue)) this.wakeups.get(queue)?.wake();
        return attempt.written;
      })
      .finally(() => {
        writing.delete(attempt);
        this.releaseHold(attempt.fence.taskId);
        this.attemptsDone.delete(done);
        // A success may have made the next steps ready: their claim loops look at once,
        // without waiting for the wake-up the settle sends through the database.
        if (attempt.writtenEdge?.to === 'succeeded') {
          const { definition, step } = attempt.claimed;
          for (const next of downstreamQueues(definition, step.name)) {
            if (!this.wakeups.has(next)) continue;
            this.drained.delete(next);
            this.wakeups.get(next)?.wake();
          }
        }
        // Written: the claim loop may have room again (at most a pool's worth of results may
        // be unwritten), unless its last claim found the queue empty.
        if (!this.drained.has(queue)) this.wakeups.get(queue)?.wake();
      });
    this.attemptsDone.add(done);
  }

  /** One statement renews every lease this worker holds; a lease it could not renew aborts its step (R9). */
  private async renewLeases(): Promise<void> {
    const held = [
      ...this.running,
      ...[...this.waiting.values()].flat(),
      ...[...this.writing.values()].flatMap((attempts) => [...attempts]),
    ];
    const attempts = held.filter((attempt) => !attempt.aborted);
    if (attempts.length === 0) return;
    try {
      const renewed = await leaseRenewMany(
        this.context.db,
        this.context.holder,
        attempts.map((attempt) => ({ taskId: attempt.fence.taskId, epoch: attempt.fence.epoch })),
        this.context.leaseMs,
      );
      for (const attempt of attempts) {
        if (renewed.has(attempt.fence.taskId)) continue;
        // Its handler has returned: the result being written is fenced on the lease anyway.
        if (this.writing.get(attempt.claimed.task.queue)?.has(attempt)) continue;
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
    }
  }
}

function allQueues(definitions: ReadonlyMap<string, WorkflowDefinition>): string[] {
  const queues = new Set<string>();
  for (const definition of definitions.values())
    for (const step of definition.steps) queues.add(step.queue);
  return [...queues].sort();
}
