import { setTimeout as sleep } from 'node:timers/promises';
import { isConflictError, isRetryableDatabaseError, isSelfCheckFailure } from '../../db/pg-errors';
import { childrenAdmittedAhead } from '../children/children-ahead';
import type { ClaimedTask } from '../claim/claimed-task';
import type { EngineContext } from '../context';
import { applyEvents } from '../decision/apply-events';
import type { EventOutcome, EventRequest } from '../decision/event-request';
import { Backoff } from '../reconnect-backoff';
import { transactionRecordingWaits } from '../tracing/committed-wait-spans';
import {
  type ChainCapacity,
  type ResultOutcome,
  writeResultsInOneStatement,
} from './one-statement-settle';

interface Pending {
  readonly request: EventRequest;
  readonly resolve: (outcome: ResultOutcome) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Free slots of the worker that the steps a batch of results makes ready may take at once
 * (chained in the settle statement), reserved while the statement runs.
 */
export interface ChainSlots {
  /** Reserves slots for the steps a batch of results may make ready, per queue. */
  reserve(requests: readonly EventRequest[]): ChainCapacity;
  /** Releases what `reserve` took and hands over the steps leased in the statement. */
  deliver(reserved: ChainCapacity, chained: readonly ClaimedTask[]): void;
}

const maxBatch = 500;
/** A conflict or deadlock clears in moments; past these, the database itself is away. */
const quickRetryDelaysMs = [10, 50, 200];
/**
 * A conflict in the one statement is tried in it this many more times; then its results go to
 * the full decision (R60), which waits for the locks instead of failing on what it cannot follow.
 */
const oneStatementConflictRetries = 1;
/**
 * Batches being written at once. A second one fills the time the first spends in round
 * trips; workflows are locked in id order in each, so two never deadlock on them.
 */
const maxFlushes = 2;

/**
 * Collects settle requests from running steps and writes them per tick: plain `complete`
 * results of the worker's own leases in one statement that commits on its own (one round trip
 * for many results: no BEGIN, no COMMIT), whatever that statement does not decide in one
 * transaction of the full decision. When the one statement fails its self-check, or keeps
 * meeting a conflict, the same results go to the full decision (R60): never dropped. A
 * transient database error is retried for what is not yet written, with the reconnect
 * backoff while the database is away, for as long as the leases may still hold (a write after
 * that is stale and changes nothing); past that the request fails and the lease simply
 * expires (the sweeper then decides, R10).
 */
export class ResultWriter {
  private queue: Pending[] = [];
  private readonly flushing = new Set<Promise<void>>();
  private scheduled = false;

  constructor(
    private readonly context: EngineContext,
    private readonly slots: ChainSlots | null = null,
  ) {}

  settle(request: EventRequest): Promise<ResultOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves when everything queued so far is written. */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.flushing.size > 0) {
      if (this.queue.length > 0 && this.flushing.size < maxFlushes) this.flush();
      else await Promise.race(this.flushing);
    }
  }

  private schedule(): void {
    if (this.scheduled || this.flushing.size >= maxFlushes) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.flushing.size >= maxFlushes || this.queue.length === 0) return;
    const batch = this.queue.splice(0, maxBatch);
    const flushing: Promise<void> = this.write(batch).finally(() => {
      this.flushing.delete(flushing);
      if (this.queue.length > 0) this.schedule();
    });
    this.flushing.add(flushing);
  }

  /** The one statement, with slots reserved for the steps it may chain. */
  private async writeInOneStatement(
    requests: readonly EventRequest[],
  ): Promise<ReadonlyMap<EventRequest, ResultOutcome>> {
    const reserved = this.slots?.reserve(requests) ?? new Map<string, number>();
    let chained: readonly ClaimedTask[] = [];
    try {
      const settled = await writeResultsInOneStatement(
        this.context.db,
        this.context.apply,
        requests,
        reserved,
      );
      chained = settled.chained;
      return settled.decided;
    } finally {
      this.slots?.deliver(reserved, chained);
    }
  }

  /** Writes a batch's results, retrying transient errors for what is not yet written. */
  private async write(batch: readonly Pending[]): Promise<void> {
    let pending = batch;
    let inOneStatement = true;
    let oneStatementConflicts = 0;
    /** Why the one statement gave its results to the full decision, if it did. */
    let fellBackFrom: unknown;
    const startedAt = performance.now();
    const backoff = new Backoff();
    for (let attempt = 0; ; attempt += 1) {
      try {
        if (inOneStatement) {
          const decided = await this.writeInOneStatement(pending.map((item) => item.request));
          // Committed: these are done, whatever happens to the rest.
          pending = pending.filter((item) => {
            const outcome = decided.get(item.request);
            if (outcome !== undefined) item.resolve(outcome);
            return outcome === undefined;
          });
          inOneStatement = false;
        }
        if (pending.length === 0) return;
        // Children are admitted before the transaction, which then holds its locks shorter.
        const requests = await childrenAdmittedAhead(
          this.context.db,
          this.context.apply,
          pending.map((item) => item.request),
        );
        const applied = await transactionRecordingWaits(this.context, (tx) =>
          applyEvents(tx, this.context.apply, requests),
        );
        if (fellBackFrom !== undefined) this.logFallback(pending, applied.outcomes, fellBackFrom);
        pending.forEach((item, index) => {
          item.resolve(applied.outcomes[index] as EventOutcome);
        });
        return;
      } catch (error) {
        if (inOneStatement) {
          // R60: a self-check that failed fails again on the same rows; a conflict may not.
          const givesWay =
            isSelfCheckFailure(error) ||
            (isConflictError(error) && oneStatementConflicts >= oneStatementConflictRetries);
          if (givesWay) {
            inOneStatement = false;
            fellBackFrom = error;
            continue;
          }
          if (isConflictError(error)) oneStatementConflicts += 1;
        }
        const retryable = isRetryableDatabaseError(error);
        if (!retryable && pending.length > 1) {
          // One bad result must not sink the others: write each on its own.
          await Promise.all(pending.map((item) => this.write([item])));
          return;
        }
        const delay = quickRetryDelaysMs[attempt] ?? backoff.failed();
        if (!retryable || performance.now() + delay - startedAt >= this.context.leaseMs) {
          this.context.logger.error(
            { err: error, batch: pending.length },
            'could not write step results',
          );
          for (const item of pending) item.reject(error);
          return;
        }
        await sleep(delay);
      }
    }
  }

  /** One line per result the full decision wrote after the one statement failed (R60). */
  private logFallback(
    items: readonly Pending[],
    outcomes: readonly EventOutcome[],
    cause: unknown,
  ): void {
    items.forEach((item, index) => {
      const outcome = outcomes[index];
      const attempt =
        outcome?.kind === 'applied'
          ? outcome.edge.attempt
          : outcome?.kind === 'stale' || outcome?.kind === 'refused'
            ? (outcome.task?.attempt ?? null)
            : null;
      this.context.logger.warn(
        {
          err: cause,
          workflowId: item.request.workflowId ?? null,
          taskId: item.request.taskId,
          attempt,
          holder: item.request.fence?.holder ?? null,
          outcome: outcome?.kind ?? null,
        },
        'the one-statement settle failed; the full decision wrote the result instead',
      );
    });
  }
}
