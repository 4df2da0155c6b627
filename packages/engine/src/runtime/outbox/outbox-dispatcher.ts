import { setTimeout as sleep } from 'node:timers/promises';
import {
  backoffDelayMs,
  defaultBackoff,
  receiptAwaitingState,
  type TaskEvent,
} from '@causeway/workflow/internal';
import {
  type OutboxDue,
  outboxRecordDelivery,
  outboxTakeDue,
} from '../../db/outbox/outbox-queries';
import { taskLogger } from '../../logger';
import type { EngineContext } from '../context';
import { applyEvents } from '../decision/apply-events';
import { Backoff } from '../reconnect-backoff';
import { transactionRecordingWaits } from '../tracing/committed-wait-spans';
import type { DeliveryResult } from './delivery-channels';

const batchSize = 20;
/** A taken row is the dispatcher's for this long; past it, another may send it (same key). */
const visibilityMs = 30_000;
const defaultMaxAttempts = 10;
/** Deliveries one dispatcher runs at once. */
const maxInFlight = 50;
/** How long stop() waits for deliveries in flight. */
const stopBudgetMs = 5_000;

/**
 * Delivers outbox rows after their edge committed (R22): one per worker process, safe with
 * many (rows are taken with SKIP LOCKED and a visibility timeout). Every attempt is recorded;
 * transient failures retry with jittered backoff (never before Retry-After); a confirmed
 * delivery confirms the task's receipt, a refusal rejects it (the machine decides retry or
 * dead by category).
 */
export class OutboxDispatcher {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly abort = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  /** A failed pass skips wake-ups for its backoff: a lost database is not asked every tick. */
  private readonly backoff = new Backoff();

  constructor(private readonly context: EngineContext) {}

  start(): void {
    this.timer = setInterval(() => this.wake(), this.context.pollIntervalMs);
    this.wake();
  }

  /** Runs a pass now (LISTEN wake-up); passes never overlap. */
  wake(): void {
    if (this.stopped || this.running !== null) return;
    this.running = this.backoff.attempt(
      () => this.dispatchAll(),
      this.context.logger,
      'outbox pass failed; will retry',
    );
    void this.running?.finally(() => {
      this.running = null;
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.abort.abort();
    await this.running;
    // A channel that ignores its abort signal must not hold shutdown forever: its row comes
    // due again after the visibility timeout and is resent with the same idempotency key.
    await Promise.race([
      Promise.all(this.inFlight),
      sleep(stopBudgetMs, undefined, { ref: false }),
    ]);
  }

  /**
   * Takes due rows while there is room and starts their deliveries without waiting for them,
   * so one slow or hung receiver never holds up the others.
   */
  private async dispatchAll(): Promise<void> {
    while (!this.stopped) {
      const room = Math.min(batchSize, maxInFlight - this.inFlight.size);
      if (room <= 0) return; // a finished delivery wakes the next pass
      const due = await outboxTakeDue(this.context.db, room, visibilityMs);
      for (const message of due) {
        const delivery: Promise<void> = this.deliver(message)
          .catch((error: unknown) =>
            this.context.logger.warn(
              { err: error, outboxId: message.id },
              'outbox delivery failed; it comes due again',
            ),
          )
          .finally(() => {
            this.inFlight.delete(delivery);
            this.wake();
          });
        this.inFlight.add(delivery);
      }
      if (due.length < room) return;
    }
  }

  private async deliver(message: OutboxDue): Promise<void> {
    const logger = taskLogger(this.context.rootLogger, {
      holder: this.context.holder,
      workflowId: message.workflowId,
      taskId: message.taskId,
      attempt: message.attempt,
      step: `outbox:${message.channel}`,
    });
    const channel = this.context.channels.get(message.channel);
    let result: DeliveryResult;
    try {
      result =
        channel === undefined
          ? {
              kind: 'retry',
              category: 'unavailable',
              message: `this process has no channel "${message.channel}"`,
            }
          : await channel.deliver({ ...message, idempotencyKey: message.id }, this.abort.signal);
    } catch (error) {
      result = { kind: 'retry', category: 'unknown', message: String(error) };
    }
    if (this.stopped && result.kind === 'retry') return; // stopping: the row comes due again later
    const maxAttempts = channel?.maxAttempts ?? defaultMaxAttempts;
    const gaveUp = result.kind === 'retry' && message.attempt >= maxAttempts;
    const outcome =
      result.kind === 'delivered'
        ? 'delivered'
        : result.kind === 'failed' || gaveUp
          ? 'failed'
          : 'retry';
    const receiptEvent: TaskEvent | null =
      result.kind === 'delivered'
        ? result.confirmation === 'confirmed'
          ? {
              type: 'receipt_confirmed',
              actor: { kind: 'receipt', name: `outbox:${message.channel}` },
            }
          : null
        : outcome === 'failed'
          ? {
              type: 'receipt_rejected',
              actor: { kind: 'receipt', name: `outbox:${message.channel}` },
              category: result.category,
              summary: gaveUp
                ? `gave up after ${message.attempt} delivery attempts: ${result.message}`
                : result.message,
            }
          : null;
    const retryInMs =
      result.kind === 'retry'
        ? // Retry-After, with the jitter on top (a storm must not return in one instant).
          (result.retryAfterMs ?? 0) + backoffDelayMs(message.attempt, defaultBackoff, Math.random)
        : null;
    const recorded = await transactionRecordingWaits(this.context, async (tx) => {
      const owned = await outboxRecordDelivery(tx, {
        outboxId: message.id,
        attempt: message.attempt,
        outcome,
        statusCode: result.statusCode ?? null,
        errorCategory: result.kind === 'delivered' ? null : result.category,
        error: result.kind === 'delivered' ? null : result.message,
        holder: this.context.holder,
        retryInMs,
      });
      if (owned && receiptEvent !== null) {
        await applyEvents(tx, this.context.apply, [
          {
            taskId: message.taskId,
            workflowId: message.workflowId,
            event: receiptEvent,
            // The receipt is for this send: the task still waits for it (R23).
            precondition: (task) =>
              task.state === receiptAwaitingState && task.receiptId === message.id,
          },
        ]);
      }
      return owned;
    });
    if (!recorded) {
      logger.warn(
        { outboxId: message.id },
        'another dispatcher took this message meanwhile; result dropped',
      );
      return;
    }
    logger.info(
      {
        outboxId: message.id,
        outcome,
        ...(result.kind === 'delivered' ? {} : { errorCategory: result.category }),
      },
      `outbox ${message.channel}: ${outcome}`,
    );
  }
}
