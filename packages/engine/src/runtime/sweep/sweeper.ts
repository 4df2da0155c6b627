import {
  leaseHoldingStates,
  receiptAwaitingState,
  type TaskEvent,
  type TaskState,
  type WorkflowDefinition,
} from '@causeway/workflow';
import {
  taskListExpiredLeases,
  taskListQueuedPastDeadline,
  taskListReceiptOverdue,
  taskListWaitsTimedOut,
} from '../../db/sweep/sweep-queries';
import { taskLogger } from '../../logger';
import type { EngineContext } from '../context';
import { applyEvents } from '../decision/apply-events';
import type { EventRequest } from '../decision/event-request';
import { Backoff } from '../reconnect-backoff';
import { PartitionUpkeep } from '../retention/partition-upkeep';
import { stepTableOf } from '../step-table';

const batchSize = 200;

/**
 * The sweeper (R10, R23, R28): expired leases, queued work past its deadline, receipts that
 * never came. Any number may run at once: each event carries a precondition checked on the
 * locked row, so a second sweeper finds the work done and writes nothing.
 */
export class Sweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** A failed pass skips the ticks of its backoff: a lost database is not asked every tick. */
  private readonly backoff = new Backoff();
  private readonly partitions: PartitionUpkeep;

  constructor(private readonly context: EngineContext) {
    this.partitions = new PartitionUpkeep(context);
  }

  start(): void {
    this.partitions.start();
    this.timer = setInterval(() => {
      if (this.running !== null) return;
      this.running = this.backoff.attempt(
        () => this.sweep(),
        this.context.logger,
        'sweep failed; will retry',
      );
      void this.running?.finally(() => {
        this.running = null;
      });
    }, this.context.sweepIntervalMs);
  }

  async stop(): Promise<void> {
    this.partitions.stop();
    if (this.timer !== null) clearInterval(this.timer);
    await this.running;
  }

  /** One pass over everything that is due; returns how many edges it wrote. */
  async sweep(): Promise<number> {
    const actor = { kind: 'sweeper' as const, name: this.context.holder };
    // Only what this engine can decide (R54): see sweep-queries.ts.
    const { stepKeys } = stepTableOf(this.context.definitions);
    const db = this.context.db;
    let edges = 0;
    for (;;) {
      const expired = await taskListExpiredLeases(db, stepKeys, batchSize);
      const pastDeadline = await taskListQueuedPastDeadline(db, stepKeys, batchSize);
      const overdue = await taskListReceiptOverdue(db, stepKeys, batchSize);
      const timedOut = await taskListWaitsTimedOut(db, stepKeys, batchSize);
      const requests: EventRequest[] = [
        ...expired.map(({ id, epoch }) => ({
          taskId: id,
          event: { type: 'lease_expired', actor } satisfies TaskEvent,
          // Still the same claim and still expired once the workflow is locked.
          precondition: (
            task: { state: string; leaseEpoch: number; leaseExpiresAt: Date | null },
            now: Date,
          ) =>
            leaseHoldingStates.includes(task.state as TaskState) &&
            task.leaseEpoch === epoch &&
            task.leaseExpiresAt !== null &&
            task.leaseExpiresAt.getTime() <= now.getTime(),
        })),
        ...pastDeadline.map((id) => ({
          taskId: id,
          event: { type: 'deadline_passed', actor } satisfies TaskEvent,
        })),
        ...overdue.map((id) => ({
          taskId: id,
          event: { type: 'receipt_timeout', actor } satisfies TaskEvent,
          precondition: (task: { state: string; receiptDeadlineAt: Date | null }, now: Date) =>
            task.state === receiptAwaitingState &&
            task.receiptDeadlineAt !== null &&
            task.receiptDeadlineAt.getTime() <= now.getTime(),
        })),
        // The machine refuses a wait that has not timed out yet, on the locked row.
        ...timedOut.map(({ id, workflowName, step }) => ({
          taskId: id,
          event: { type: 'wait_timeout', actor } satisfies TaskEvent,
          ...timeoutOutput(this.context.definitions.get(workflowName), step),
        })),
      ];
      if (requests.length === 0) return edges;
      const result = await this.context.db
        .transaction()
        .execute((tx) => applyEvents(tx, this.context.apply, requests));
      const applied = result.outcomes.filter((outcome) => outcome.kind === 'applied');
      for (const outcome of applied) {
        if (outcome.kind !== 'applied') continue;
        taskLogger(this.context.rootLogger, {
          holder: this.context.holder,
          workflowId: outcome.task.workflowId,
          taskId: outcome.taskId,
          attempt: outcome.task.attempt,
          step: outcome.task.step,
        }).info(
          { reason: outcome.edge.reason },
          `sweeper: ${outcome.edge.from} → ${outcome.edge.to} (${outcome.edge.reason})`,
        );
      }
      edges += applied.length;
      const full =
        expired.length === batchSize ||
        pastDeadline.length >= batchSize ||
        overdue.length === batchSize ||
        timedOut.length === batchSize;
      if (!full || applied.length === 0) return edges;
    }
  }
}

/** The declared output of a wait that gives up (R39), for the request's edge. */
function timeoutOutput(
  definition: WorkflowDefinition | undefined,
  stepName: string,
): Pick<EventRequest, 'extra'> {
  const output = definition?.steps.find((step) => step.name === stepName)?.event?.onTimeout;
  return output == null ? {} : { extra: { outputJson: JSON.stringify(output.output) ?? 'null' } };
}
