import { setTimeout as sleep } from 'node:timers/promises';
import { isRetryableDatabaseError } from '../db/pg-errors';
import { applyEvents, type EventOutcome, type EventRequest } from './apply-events';
import type { EngineContext } from './context';

interface Pending {
  readonly request: EventRequest;
  readonly resolve: (outcome: EventOutcome) => void;
  readonly reject: (error: unknown) => void;
}

const maxBatch = 500;
const retryDelaysMs = [10, 50, 200, 1_000, 3_000];

/**
 * Collects settle requests from running steps and writes them in one transaction per tick:
 * one workflow-lock pass, one multi-row task update and one multi-row log insert for many
 * results. A transient database error is retried; past that the request fails and the lease
 * simply expires (the sweeper then decides, R10).
 */
export class Settler {
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private scheduled = false;

  constructor(private readonly context: EngineContext) {}

  settle(request: EventRequest): Promise<EventOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves when everything queued so far is written. */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.flushing !== null) {
      if (this.flushing !== null) await this.flushing;
      else await this.flush();
    }
  }

  private schedule(): void {
    if (this.scheduled || this.flushing !== null) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private flush(): Promise<void> {
    if (this.flushing !== null || this.queue.length === 0)
      return this.flushing ?? Promise.resolve();
    const batch = this.queue.splice(0, maxBatch);
    this.flushing = this.write(batch).finally(() => {
      this.flushing = null;
      if (this.queue.length > 0) this.schedule();
    });
    return this.flushing;
  }

  private async write(batch: readonly Pending[]): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        const result = await this.context.db.transaction().execute((tx) =>
          applyEvents(
            tx,
            this.context.apply,
            batch.map((item) => item.request),
          ),
        );
        batch.forEach((item, index) => {
          item.resolve(result.outcomes[index] as EventOutcome);
        });
        return;
      } catch (error) {
        const delay = retryDelaysMs[attempt];
        if (!isRetryableDatabaseError(error) && batch.length > 1) {
          // One bad result must not sink the others: write each on its own.
          await Promise.all(batch.map((item) => this.write([item])));
          return;
        }
        if (delay === undefined || !isRetryableDatabaseError(error)) {
          this.context.logger.error(
            { err: error, batch: batch.length },
            'could not write step results',
          );
          for (const item of batch) item.reject(error);
          return;
        }
        await sleep(delay);
      }
    }
  }
}
