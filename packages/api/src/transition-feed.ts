import {
  type Logger,
  Notifier,
  type ReadModel,
  type TransitionLogReader,
  transitionsChannel,
} from '@causeway/engine';
import type { Transition } from '@causeway/workflow';
import { ApiError } from './errors';

export interface TransitionFeedOptions {
  readonly readModel: ReadModel;
  /** The LISTEN connection's database (one connection per API process). */
  readonly databaseUrl: string;
  readonly logger: Logger;
  /** Reads the log this often even without a notification (R5: a NOTIFY is only a wake-up). Default 1 s. */
  readonly pollIntervalMs?: number;
  /** Rows per read. Default 500. */
  readonly batchSize?: number;
  /** Rows a subscriber may have waiting before it is dropped with SUBSCRIPTION_OVERFLOW. Default 10,000. */
  readonly maxBuffered?: number;
  /**
   * Note the primary's WAL position after each read that found rows (`readAfter`), so pages
   * refreshed because of a row can ask a read replica for at least that state.
   */
  readonly trackWalPosition?: boolean;
}

/**
 * Live transitions for every subscriber of this API process. One LISTEN connection wakes one
 * reader of the log (`TransitionLogReader`, which releases rows only once no smaller id can
 * still commit); each row is offered to every subscriber in id order. A subscriber resuming
 * `after` an id first reads what it missed from the log, up to the point where live delivery
 * took over, so it sees every row exactly once.
 */
export class TransitionFeed {
  private readonly reader: TransitionLogReader;
  private readonly subscribers = new Set<TransitionSubscription>();
  private readonly pollIntervalMs: number;
  readonly batchSize: number;
  readonly maxBuffered: number;
  private readonly notifier: Notifier;
  private unsubscribe: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private reading = false;
  private readAgain = false;
  private waitDelayMs = 5;
  private failures = 0;
  private started: Promise<void> | null = null;
  private readerStarted = false;
  private walPosition: string | null = null;
  closed = false;

  constructor(private readonly options: TransitionFeedOptions) {
    this.reader = options.readModel.transitionLogReader();
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.batchSize = options.batchSize ?? 500;
    this.maxBuffered = options.maxBuffered ?? 10_000;
    this.notifier = new Notifier(options.databaseUrl, options.logger, transitionsChannel);
  }

  /** Connects LISTEN and finds the log's end. Idempotent; subscriptions wait for it. */
  start(): Promise<void> {
    this.started ??= (async () => {
      // Any announcement (or a reconnect, when some may have been missed) reads the log now.
      this.unsubscribe = await this.notifier.subscribe(() => this.schedule(0));
      await this.reader.start();
      this.readerStarted = true;
      this.schedule(0);
    })();
    return this.started;
  }

  /** The id up to which every row has been offered to subscribers. */
  get position(): bigint {
    return this.reader.position;
  }

  /**
   * The primary's WAL position read after the rows offered so far were read (null when not
   * tracked): a replica that replayed it shows every row offered.
   */
  get readAfter(): string | null {
    return this.walPosition;
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /**
   * Transitions from now on (or after `after`, from the log first), optionally of one workflow.
   */
  async subscribe(filter: {
    readonly workflowId?: string;
    readonly after?: bigint;
  }): Promise<AsyncIterableIterator<Transition>> {
    if (this.closed) throw new ApiError('SERVICE_UNAVAILABLE', 'the API is shutting down');
    await this.start();
    if (this.closed) throw new ApiError('SERVICE_UNAVAILABLE', 'the API is shutting down');
    // Registering and reading the position happen in one synchronous step: every row above
    // the position will be offered to this subscriber, every row at or below it is in the log.
    const subscription = new TransitionSubscription(this, filter, this.reader.position);
    this.subscribers.add(subscription);
    return subscription;
  }

  /** Ends every subscription (their streams complete) and the LISTEN connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    for (const subscription of [...this.subscribers]) subscription.end();
    this.unsubscribe?.();
    await this.notifier.close();
  }

  /** @internal */
  remove(subscription: TransitionSubscription): void {
    this.subscribers.delete(subscription);
  }

  /** @internal Log rows in (after, upTo] for a catching-up subscriber. */
  readRange(after: bigint, upTo: bigint, workflowId: string | undefined) {
    return this.options.readModel.transitionRange({
      after,
      upTo,
      ...(workflowId === undefined ? {} : { workflowId }),
      limit: this.batchSize,
    });
  }

  private schedule(delayMs: number): void {
    if (this.closed || !this.readerStarted) return;
    if (this.reading) {
      if (delayMs === 0) this.readAgain = true;
      return;
    }
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.readAll();
    }, delayMs);
    this.timer.unref();
  }

  private async readAll(): Promise<void> {
    if (this.closed || this.reading) return;
    this.reading = true;
    let next = this.pollIntervalMs;
    try {
      do {
        this.readAgain = false;
        for (;;) {
          const rows = await this.reader.read(this.batchSize);
          if (rows.length > 0 && this.options.trackWalPosition === true) {
            // Before the rows go out: a subscriber may read the pages they change at once.
            this.walPosition = (await this.options.readModel.walPosition()).lsn;
          }
          for (const row of rows) {
            for (const subscription of this.subscribers) subscription.offer(row);
          }
          if (rows.length < this.batchSize || this.closed) break;
        }
      } while (this.readAgain && !this.closed);
      this.failures = 0;
      if (this.reader.waiting) {
        // Some ids are not final yet: look again soon (their transactions are short).
        next = this.waitDelayMs;
        this.waitDelayMs = Math.min(this.waitDelayMs * 2, 200);
      } else {
        this.waitDelayMs = 5;
      }
    } catch (error) {
      this.failures += 1;
      next = Math.min(this.pollIntervalMs * this.failures, 10_000);
      if (!this.closed) {
        this.options.logger.warn({ err: error }, 'reading the transition log failed; retrying');
      }
    } finally {
      this.reading = false;
    }
    this.schedule(this.readAgain ? 0 : next);
  }
}

/**
 * One subscriber's stream: first the rows it missed (from the log), then live rows, never a
 * row twice. `return()` (the client went away) ends it at once, even while it waits.
 */
class TransitionSubscription implements AsyncIterableIterator<Transition> {
  private live: Transition[] = [];
  private backlog: Transition[] = [];
  private catchUpAfter: bigint | null;
  private readonly catchUpTo: bigint;
  private lastId: bigint;
  private wake: (() => void) | null = null;
  private ended = false;
  private failure: ApiError | null = null;
  private readonly workflowId: string | undefined;

  constructor(
    private readonly feed: TransitionFeed,
    filter: { readonly workflowId?: string; readonly after?: bigint },
    position: bigint,
  ) {
    this.workflowId = filter.workflowId;
    this.catchUpTo = position;
    this.catchUpAfter = filter.after !== undefined && filter.after < position ? filter.after : null;
    this.lastId = filter.after !== undefined && filter.after > position ? filter.after : position;
  }

  /** A live row from the feed (ids only grow). */
  offer(row: Transition): void {
    if (this.ended || this.failure !== null) return;
    if (this.workflowId !== undefined && row.workflowId !== this.workflowId) return;
    if (this.live.length >= this.feed.maxBuffered) {
      this.failure = new ApiError(
        'SUBSCRIPTION_OVERFLOW',
        'this subscriber fell too far behind; subscribe again with `after` set to the last id it received',
      );
      this.live = [];
      this.feed.remove(this);
    } else {
      this.live.push(row);
    }
    this.wake?.();
  }

  async next(): Promise<IteratorResult<Transition>> {
    for (;;) {
      if (this.ended) return { done: true, value: undefined };
      const fromLog = this.backlog.shift();
      if (fromLog !== undefined) return { done: false, value: fromLog };
      if (this.catchUpAfter !== null) {
        const rows = await this.feed.readRange(this.catchUpAfter, this.catchUpTo, this.workflowId);
        const last = rows.at(-1);
        this.catchUpAfter =
          rows.length < this.feed.batchSize || last === undefined ? null : BigInt(last.id);
        this.backlog = [...rows];
        continue;
      }
      const row = this.live.shift();
      if (row !== undefined) {
        const id = BigInt(row.id);
        if (id <= this.lastId) continue;
        this.lastId = id;
        return { done: false, value: row };
      }
      if (this.failure !== null) {
        const failure = this.failure;
        this.end();
        throw failure;
      }
      if (this.feed.closed) {
        this.end();
        continue;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = null;
    }
  }

  async return(): Promise<IteratorResult<Transition>> {
    this.end();
    return { done: true, value: undefined };
  }

  async throw(error?: unknown): Promise<IteratorResult<Transition>> {
    this.end();
    throw error;
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.live = [];
    this.backlog = [];
    this.feed.remove(this);
    this.wake?.();
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Transition> {
    return this;
  }
}
