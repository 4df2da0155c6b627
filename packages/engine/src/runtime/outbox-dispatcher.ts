import { backoffDelayMs, defaultBackoff, type TaskEvent } from '@causeway/workflow';
import type { DeliveryResult } from '../channels';
import { type OutboxDue, outboxRecordDelivery, outboxTakeDue } from '../db/store';
import { taskLogger } from '../logger';
import { applyEvents } from './apply-events';
import type { EngineContext } from './context';

const batchSize = 20;
/** A taken row is the dispatcher's for this long; past it, another may send it (same key). */
const visibilityMs = 30_000;
const defaultMaxAttempts = 10;

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
  private stopped = false;

  constructor(private readonly context: EngineContext) {}

  start(): void {
    this.timer = setInterval(() => this.wake(), this.context.pollIntervalMs);
    this.wake();
  }

  /** Runs a pass now (LISTEN wake-up); passes never overlap. */
  wake(): void {
    if (this.stopped) return;
    this.running ??= this.dispatchAll()
      .catch((error: unknown) =>
        this.context.logger.warn({ err: error }, 'outbox pass failed; will retry'),
      )
      .finally(() => {
        this.running = null;
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.abort.abort();
    await this.running;
  }

  private async dispatchAll(): Promise<void> {
    while (!this.stopped) {
      const due = await outboxTakeDue(this.context.db, batchSize, visibilityMs);
      await Promise.all(due.map((message) => this.deliver(message)));
      if (due.length < batchSize) return;
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
        ? Math.max(
            result.retryAfterMs ?? 0,
            backoffDelayMs(message.attempt, defaultBackoff, Math.random),
          )
        : null;
    const recorded = await this.context.db.transaction().execute(async (tx) => {
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
              task.state === 'awaiting_receipt' && task.receiptId === message.id,
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
