import {
  leaseHoldingStates,
  receiptAwaitingState,
  type TaskEvent,
  type TaskState,
  type WorkflowDefinition,
} from '@causeway/workflow/internal';
import { concurrencyHeadsRepair } from '../../db/claim/concurrency-heads';
import {
  taskListChildrenDecided,
  taskListExpiredLeases,
  taskListQueuedPastDeadline,
  taskListReceiptOverdue,
  taskListWaitsTimedOut,
} from '../../db/sweep/sweep-queries';
import { eventSnapshotNow, taskListWaitsOfNewEvents } from '../../db/sweep/waits-of-new-events';
import { taskListWaitsWithStoredEvents } from '../../db/sweep/waits-with-stored-events';
import { taskLogger } from '../../logger';
import type { EngineContext } from '../context';
import { applyEvents, settleDecidedSteps } from '../decision/apply-events';
import type { EventRequest } from '../decision/event-request';
import { Backoff } from '../reconnect-backoff';
import { PartitionUpkeep } from '../retention/partition-upkeep';
import { stepTableOf } from '../step-table';
import { noteStoredEventWaits, transactionRecordingWaits } from '../tracing/committed-wait-spans';
import { storedEventWaitRequests } from './stored-event-waits';

const batchSize = 200;

/**
 * The sweeper (R10, R23, R28, R39, R54): expired leases, queued work past its deadline,
 * receipts that never came, waits that timed out, and waits a stored event matches that the
 * engine which received it could not decide. It lists only what this engine defines. Any
 * number may run at once: each event carries a precondition checked on the locked row, so a
 * second sweeper finds the work done and writes nothing.
 */
export class Sweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** A failed pass skips the ticks of its backoff: a lost database is not asked every tick. */
  private readonly backoff = new Backoff();
  private readonly partitions: PartitionUpkeep;
  /** The snapshot up to which stored events were read (null: every wait is looked at). */
  private eventsSeen: string | null = null;

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
    // Only what this engine can decide (R54): see sweep-queries.ts.
    const { stepKeys } = stepTableOf(this.context.definitions);
    // Events first: an approval that came before the timeout's sweep wins over its default (R39).
    // A failed look for them does not keep the pass from the due work; the pass still fails.
    let received = 0;
    let failure: { readonly error: unknown } | null = null;
    try {
      received = await this.sweepStoredEvents(stepKeys);
    } catch (error) {
      failure = { error };
    }
    const due = await this.sweepDue(stepKeys);
    await this.sweepDecidedSteps(stepKeys);
    await concurrencyHeadsRepair(this.context.db, batchSize);
    if (failure !== null) throw failure.error;
    return received + due;
  }

  /**
   * Steps awaiting children whose tally decides them: settled by the child edge that decided
   * it, unless that edge's engine does not define the step's workflow (R54); then here.
   */
  private async sweepDecidedSteps(stepKeys: readonly string[]): Promise<void> {
    const db = this.context.db;
    const decided = await taskListChildrenDecided(db, stepKeys, batchSize);
    if (decided.length === 0) return;
    await transactionRecordingWaits(this.context, (tx) =>
      settleDecidedSteps(tx, this.context.apply, decided),
    );
  }

  /** Expired leases, deadlines, wait timeouts and overdue receipts, oldest first. */
  private async sweepDue(stepKeys: readonly string[]): Promise<number> {
    const actor = { kind: 'sweeper' as const, name: this.context.holder };
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
        ...timedOut.map(({ id, workflowName, workflowVersion, step }) => ({
          taskId: id,
          event: { type: 'wait_timeout', actor } satisfies TaskEvent,
          ...timeoutOutput(this.context.definitions.at(workflowName, workflowVersion), step),
        })),
      ];
      if (requests.length === 0) return edges;
      const applied = await this.apply(requests);
      edges += applied;
      const full =
        expired.length === batchSize ||
        pastDeadline.length >= batchSize ||
        overdue.length === batchSize ||
        timedOut.length === batchSize;
      if (!full || applied === 0) return edges;
    }
  }

  /**
   * Waits a stored event matches that the engine which stored it could not decide (R54). The
   * first pass looks at every wait; each later one only at the waits of events stored since
   * the pass before it could see (`taskListWaitsOfNewEvents`), so a pass costs the new events,
   * not the parked waits. The point a pass read up to moves on only once its edges are written.
   */
  private async sweepStoredEvents(stepKeys: readonly string[]): Promise<number> {
    const db = this.context.db;
    if (this.eventsSeen === null) {
      // Taken before the look at every wait: an event it may miss is after this snapshot.
      const snapshot = await eventSnapshotNow(db);
      const edges = await this.sweepEveryWait(stepKeys);
      this.eventsSeen = snapshot;
      return edges;
    }
    const { snapshot, taskIds } = await taskListWaitsOfNewEvents(db, this.eventsSeen);
    let edges = 0;
    for (let start = 0; start < taskIds.length; start += batchSize) {
      const scope = { taskIds: taskIds.slice(start, start + batchSize) };
      const listed = await taskListWaitsWithStoredEvents(db, stepKeys, scope);
      const requests = storedEventWaitRequests(this.context.definitions, listed);
      if (requests.length > 0) edges += await this.apply(requests);
    }
    this.eventsSeen = snapshot;
    return edges;
  }

  /**
   * Every wait a stored event matches, a page at a time in task id order: a page whose waits
   * take none of their events (a payload their step refuses) does not stop the pages after it.
   */
  private async sweepEveryWait(stepKeys: readonly string[]): Promise<number> {
    let edges = 0;
    let afterTaskId: string | null = null;
    for (;;) {
      const listed = await taskListWaitsWithStoredEvents(this.context.db, stepKeys, {
        afterTaskId,
        limit: batchSize,
      });
      const requests = storedEventWaitRequests(this.context.definitions, listed);
      if (requests.length > 0) edges += await this.apply(requests);
      const last = listed.at(-1);
      if (last === undefined || new Set(listed.map((wait) => wait.taskId)).size < batchSize) {
        return edges;
      }
      afterTaskId = last.taskId;
    }
  }

  /** Decides the requests in one transaction and logs each edge written; returns how many. */
  private async apply(requests: readonly EventRequest[]): Promise<number> {
    // The waits stored events complete here (R54) are recorded as the send's would be (R57).
    const result = await transactionRecordingWaits(this.context, async (tx) => {
      const applied = await applyEvents(tx, this.context.apply, requests);
      noteStoredEventWaits(tx, requests, applied.outcomes);
      return applied;
    });
    let applied = 0;
    for (const outcome of result.outcomes) {
      if (outcome.kind !== 'applied') continue;
      applied += 1;
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
    return applied;
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
