import { setTimeout as sleep } from 'node:timers/promises';
import type { Transaction } from 'kysely';
import { isRetryableDatabaseError } from '../db/pg-errors';
import type { CausewayDatabase } from '../db/schema';
import type { EventOutcome, EventRequest } from './apply-events';
import type { EngineContext } from './context';
import { settleEvents } from './settle';

interface Pending {
  readonly request: EventRequest;
  readonly resolve: (outcome: EventOutcome) => void;
  readonly reject: (error: unknown) => void;
}

const maxBatch = 500;
const retryDelaysMs = [10, 50, 200, 1_000, 3_000];
/**
 * Settle transactions in flight at once. A second one fills the time the first spends in
 * round trips; workflows are locked in id order in each, so two never deadlock on them.
 */
const maxFlushes = 2;

/**
 * More work for a settle transaction once its results are written: the worker claims tasks
 * for the slots those results freed, so a cycle of results and replacements is one
 * transaction. What it took counts only if the transaction commits.
 */
export type SettleFollowUp = (
  tx: Transaction<CausewayDatabase>,
  settledTaskIds: ReadonlySet<string>,
) => Promise<FollowUpClaims>;

/** What a follow-up took, told how its transaction ended. */
export interface FollowUpClaims {
  committed(): void;
  rolledBack(): void;
}

/**
 * Collects settle requests from running steps and writes them in one transaction per tick:
 * one workflow-lock pass, one multi-row task update and one multi-row log insert for many
 * results, then the follow-up's claims in the same transaction. A transient database error is
 * retried (a failed follow-up only drops the claims); past that the request fails and the
 * lease simply expires (the sweeper then decides, R10).
 */
export class Settler {
  private queue: Pending[] = [];
  private readonly flushing = new Set<Promise<void>>();
  private scheduled = false;

  constructor(
    private readonly context: EngineContext,
    private readonly followUp: SettleFollowUp | null = null,
  ) {}

  settle(request: EventRequest): Promise<EventOutcome> {
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

  private async write(batch: readonly Pending[]): Promise<void> {
    let withFollowUp = this.followUp !== null;
    for (let attempt = 0; ; attempt += 1) {
      // Set inside the transaction; read after it ends, committed or not.
      const followUp: { claims: FollowUpClaims | null; failed: boolean } = {
        claims: null,
        failed: false,
      };
      try {
        const result = await this.context.db.transaction().execute(async (tx) => {
          const applied = await settleEvents(
            tx,
            this.context.apply,
            batch.map((item) => item.request),
          );
          // Only a first try claims: a retry is about writing the results, nothing more.
          if (attempt === 0 && withFollowUp && this.followUp !== null) {
            followUp.failed = true;
            followUp.claims = await this.followUp(
              tx,
              new Set(batch.map((item) => item.request.taskId)),
            );
            followUp.failed = false;
          }
          return applied;
        });
        followUp.claims?.committed();
        batch.forEach((item, index) => {
          item.resolve(result.outcomes[index] as EventOutcome);
        });
        return;
      } catch (error) {
        followUp.claims?.rolledBack();
        if (followUp.failed) {
          // The claim failed, not the results: write them again at once (the same try
          // number), without claiming.
          this.context.logger.warn({ err: error }, 'claim alongside results failed');
          withFollowUp = false;
          attempt -= 1;
          continue;
        }
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
