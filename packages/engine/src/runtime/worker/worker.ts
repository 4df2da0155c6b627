import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowRegistry } from '@causeway/workflow/internal';
import { outboxWakeup } from '../../db/notify-channels';
import { isRetryableDatabaseError } from '../../db/pg-errors';
import { claimReadyTasks } from '../claim/claim-ready-tasks';
import type { ClaimedTask, ClaimResult } from '../claim/claimed-task';
import type { EngineContext } from '../context';
import type { EventRequest } from '../decision/event-request';
import { OutboxDispatcher } from '../outbox/outbox-dispatcher';
import { Backoff } from '../reconnect-backoff';
import type { RegistryMember } from '../registry/worker-registry';
import { ResultWriter } from '../settle/result-writer';
import { downstreamQueues } from '../step-table';
import { Sweeper } from '../sweep/sweeper';
import { Attempt } from './executor';
import { LeaseRenewal } from './lease-renewal';
import { QueuePool } from './queue-pool';

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
  /** Run the scheduler (R40) in this worker, if it runs the sweeper (default true; safe with many). */
  readonly scheduler?: boolean;
  /** Run the outbox dispatcher in this worker (default: when the engine has channels). */
  readonly outbox?: boolean;
}

/** A loop a worker runs beside its pools, started and stopped with its sweeper (the scheduler). */
export interface BackgroundLoop {
  start(): void;
  stop(): Promise<void>;
}

export interface StopOptions {
  /** How long running steps may take to finish after their signals are aborted (R31). */
  readonly drainMs?: number;
}

export interface WorkerHandle {
  /** Graceful shutdown (R31): stop claiming, abort signals, drain, release, exit. */
  stop(options?: StopOptions): Promise<void>;
  /** Attempts executing now (for tests and tools). */
  readonly running: ReadonlySet<Attempt>;
}

/**
 * A worker: one bounded pool per queue (R32), batch claims with SKIP LOCKED (R8), LISTEN
 * wake-ups plus polling (R5), lease renewal on its own timer (R9, R11), and the sweeper.
 */
export class Worker implements WorkerHandle, RegistryMember {
  /** Attempts executing now. */
  readonly running = new Set<Attempt>();
  /** Each queue's pool, in the order the queues were given. */
  private readonly pools = new Map<string, QueuePool>();
  /** The pools each result being written holds a slot in (see `QueuePool.hold`), by task id. */
  private readonly holding = new Map<string, readonly QueuePool[]>();
  private readonly resultWriter: ResultWriter;
  private readonly sweeper: Sweeper | null;
  private readonly dispatcher: OutboxDispatcher | null;
  private readonly loops: Promise<void>[] = [];
  private readonly attemptsDone = new Set<Promise<void>>();
  private stopping = false;
  private readonly renewal: LeaseRenewal;
  private unsubscribe: (() => void) | null = null;
  private stopped: Promise<void> | null = null;

  constructor(
    private readonly context: EngineContext,
    private readonly options: WorkerOptions,
    private readonly background: readonly BackgroundLoop[] = [],
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
    for (const queue of options.queues ?? allQueues(context.definitions)) {
      const limit =
        typeof options.concurrency === 'number' ? options.concurrency : options.concurrency[queue];
      if (limit === undefined || !Number.isInteger(limit) || limit < 1) {
        throw new RangeError(
          `concurrency for queue "${queue}" must be a positive integer, got ${limit}`,
        );
      }
      this.pools.set(queue, new QueuePool(queue, limit, options.prefetch));
    }
    this.renewal = new LeaseRenewal(context, this.pools, this.running);
  }

  /** Each queue's slots, for the worker registry. */
  get slots(): ReadonlyMap<string, number> {
    return new Map([...this.pools].map(([queue, pool]) => [queue, pool.limit]));
  }

  get sweeps(): boolean {
    return this.sweeper !== null;
  }

  async start(): Promise<void> {
    this.unsubscribe = await this.context.notifier.subscribe((queue) => {
      if (queue === outboxWakeup || queue === '*') this.dispatcher?.wake();
      for (const name of queue === '*' ? this.pools.keys() : [queue]) {
        this.pools.get(name)?.announce();
      }
    });
    // Registered before the first claim: a lease of this holder is never one the registry
    // does not know.
    await this.context.registry.join(this);
    for (const pool of this.pools.values()) this.loops.push(this.claimLoop(pool));
    this.renewal.start();
    this.sweeper?.start();
    for (const loop of this.background) loop.start();
    this.dispatcher?.start();
    this.context.logger.info({ queues: Object.fromEntries(this.slots) }, 'worker started');
  }

  stop(options: StopOptions = {}): Promise<void> {
    this.stopped ??= this.shutdown(options.drainMs ?? 10_000);
    return this.stopped;
  }

  private async shutdown(drainMs: number): Promise<void> {
    this.stopping = true;
    for (const pool of this.pools.values()) pool.wakeup.wake();
    await Promise.all(this.loops);
    await this.sweeper?.stop();
    await Promise.all(this.background.map((loop) => loop.stop()));
    await this.dispatcher?.stop();
    // Prefetched attempts never started: hand them back at once.
    const waiting = [...this.pools.values()].flatMap((pool) => pool.takeWaiting());
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
    this.renewal.stop();
    this.unsubscribe?.();
    await this.resultWriter.drain();
    // Only now, with every lease handed back or settled: until here it still renews them.
    await this.context.registry.leave(this);
    this.context.logger.info('worker stopped');
  }

  private async claimLoop(pool: QueuePool): Promise<void> {
    const { queue, wakeup } = pool;
    const backoff = new Backoff();
    // The earliest next slot (performance.now() time) of a rate limit key a claim of this loop
    // spent (R51): a later claim finds the key full and says nothing, yet it has room then.
    let slotAt = Number.POSITIVE_INFINITY;
    while (!this.stopping) {
      const free = pool.freeSlots();
      if (free <= 0) {
        await wakeup.wait(this.context.pollIntervalMs);
        continue;
      }
      const batchSize = this.options.claimBatchSize ?? pool.limit + pool.prefetchLimit;
      const wanted = Math.min(free, batchSize);
      const announced = pool.announced;
      pool.reserve(wanted);
      try {
        const { claimed, skipped, nextSlotInMs } = await this.claim(queue, wanted).finally(() =>
          pool.reserve(-wanted),
        );
        if (backoff.failing > 0) {
          this.context.logger.info({ queue, failures: backoff.failing }, 'claims work again');
        }
        backoff.succeeded();
        const now = performance.now();
        if (slotAt <= now) slotAt = Number.POSITIVE_INFINITY;
        if (nextSlotInMs != null) slotAt = Math.min(slotAt, now + Math.max(0, nextSlotInMs));
        pool.drained = false;
        this.enqueue(pool, claimed);
        if (claimed.length === wanted) continue; // there may be more
        // Work announced while this claim ran may have missed it: look again at once.
        if (pool.announced !== announced) continue;
        if (skipped === 0) pool.drained = true;
        // Rows skipped because their workflow was busy become claimable in a moment; a rate
        // limit key a claim filled has room again at its next slot.
        await wakeup.wait(
          skipped > 0
            ? 5
            : Math.max(1, Math.min(this.context.pollIntervalMs, slotAt - performance.now())),
        );
      } catch (error) {
        const retryInMs = backoff.failed();
        const failures = backoff.failing;
        this.context.logger.error({ err: error, queue, failures, retryInMs }, 'claim failed');
        if (!isRetryableDatabaseError(error) && failures > 20) {
          this.context.logger.error({ queue }, 'claims keep failing; still retrying');
        }
        // A wake-up (the LISTEN connection back, a submit) cuts the wait short.
        await wakeup.wait(retryInMs);
      }
    }
  }

  /** Starts waiting attempts while the queue has free slots (R32). */
  private pump(pool: QueuePool): void {
    for (let attempt = pool.nextToStart(); attempt !== undefined; attempt = pool.nextToStart()) {
      this.startAttempt(pool, attempt);
    }
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
      const pools = this.holding.get(request.taskId);
      if (pools === undefined) continue;
      this.releaseHold(request.taskId);
      // A stopping worker takes no new work (R31): the steps are queued for others.
      if (this.stopping) continue;
      for (const { queue } of pools) reserved.set(queue, (reserved.get(queue) ?? 0) + 1);
    }
    for (const [queue, slots] of reserved) this.pools.get(queue)?.reserve(slots);
    return reserved;
  }

  /** Gives back the slots a result held for the steps it may make ready. */
  private releaseHold(taskId: string): void {
    const pools = this.holding.get(taskId);
    if (pools === undefined) return;
    this.holding.delete(taskId);
    for (const pool of pools) pool.releaseHold();
  }

  /** Releases a chain reservation and runs (or, when stopping, hands back) the chained steps. */
  private deliverChained(
    reserved: ReadonlyMap<string, number>,
    chained: readonly ClaimedTask[],
  ): void {
    for (const [queue, slots] of reserved) this.pools.get(queue)?.reserve(-slots);
    // Steps are chained only in the queues of `reserved`, which are all served here.
    const byPool = new Map<QueuePool, ClaimedTask[]>();
    for (const claimed of chained) {
      const pool = this.pools.get(claimed.task.queue);
      if (pool === undefined) continue;
      const tasks = byPool.get(pool) ?? [];
      tasks.push(claimed);
      byPool.set(pool, tasks);
    }
    for (const [pool, claimed] of byPool) this.enqueue(pool, claimed);
    // Slots reserved and not used are free again for the claim loops.
    for (const queue of reserved.keys()) this.pools.get(queue)?.wakeUnlessDrained();
  }

  /** Claimed tasks wait for a slot, and start at once where one is free. */
  private enqueue(pool: QueuePool, claimed: readonly ClaimedTask[]): void {
    if (this.stopping) {
      // A claim that committed while the worker stops: hand its tasks straight back (R31).
      for (const task of claimed) {
        const released = new Attempt(this.context, this.resultWriter, task).release();
        this.attemptsDone.add(released);
        void released.finally(() => this.attemptsDone.delete(released));
      }
      return;
    }
    pool.enqueue(claimed.map((task) => new Attempt(this.context, this.resultWriter, task)));
    this.pump(pool);
  }

  /** One claim for a queue (the one-statement claim commits on its own). */
  private claim(queue: string, limit: number): Promise<ClaimResult> {
    return claimReadyTasks(this.context.db, this.context.apply, {
      queue,
      limit,
      holder: this.context.holder,
    });
  }

  private startAttempt(pool: QueuePool, attempt: Attempt): void {
    this.running.add(attempt);
    pool.started();
    const startedAt = performance.now();
    const done = attempt
      .run()
      .then(() => {
        // The handler returned: its slot is free while the resultWriter writes its result, so the
        // claim for it overlaps that write.
        pool.returned(attempt, performance.now() - startedAt);
        this.running.delete(attempt);
        const { definition, step } = attempt.claimed;
        // A hold counts as a lease the pool may take. In its own queue it takes the slot this
        // handler just freed, whatever the prefetch holds; another queue may be full, so
        // there only while a slot is free.
        const next = downstreamQueues(definition, step.name).flatMap((name) => {
          const downstream = this.pools.get(name);
          return downstream !== undefined && (downstream === pool || downstream.freeSlots() > 0)
            ? [downstream]
            : [];
        });
        if (next.length > 0 && !this.stopping) {
          this.holding.set(attempt.fence.taskId, next);
          for (const downstream of next) downstream.hold();
        }
        this.pump(pool);
        pool.wakeUnlessDrained();
        return attempt.written;
      })
      .finally(() => {
        pool.written(attempt);
        this.releaseHold(attempt.fence.taskId);
        this.attemptsDone.delete(done);
        // A success may have made the next steps ready: their claim loops look at once,
        // without waiting for the wake-up the settle sends through the database.
        if (attempt.writtenEdge?.to === 'succeeded') {
          const { definition, step } = attempt.claimed;
          for (const next of downstreamQueues(definition, step.name)) this.pools.get(next)?.wake();
        }
        // Written: the claim loop may have room again (at most a pool's worth of results may
        // be unwritten), unless its last claim found the queue empty.
        pool.wakeUnlessDrained();
      });
    this.attemptsDone.add(done);
  }
}

function allQueues(definitions: WorkflowRegistry): string[] {
  const queues = new Set<string>();
  for (const definition of definitions.versions)
    for (const step of definition.steps) queues.add(step.queue);
  return [...queues].sort();
}
