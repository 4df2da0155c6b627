import {
  type Actor,
  classifyError,
  isAwaitReceipt,
  isSendRequest,
  isSnooze,
  isStartChildren,
  jsonStorageProblem,
  type TaskEdge,
  type TaskEvent,
} from '@causeway/workflow/internal';
import type { LeaseFence } from '../../db/lease/lease-fence';
import { taskWriteFenced } from '../../db/lease/task-write-fenced';
import { newId } from '../../ids';
import { type Logger, taskLogger } from '../../logger';
import type { ClaimedTask } from '../claim/claimed-task';
import type { EngineContext } from '../context';
import type { EventRequest } from '../decision/event-request';
import type { ResultWriter } from '../settle/result-writer';
import { promotesStepDecidedInFull } from '../step-table';
import { AttemptSpan, type ResultRefusal } from '../tracing/attempt-span';
import { tracerRegistered } from '../tracing/trace-context';
import { type TraceParentRead, traceParentOf } from '../tracing/trace-parents';
import { AttemptContext, type AttemptOwner, type FencedChange } from './attempt-context';
import { type HandlerOutcome, returnedOutcome, thrownOutcome } from './handler-runs';
import { type AbortReason, CancelConfirmed, LeaseLost, StepAbort } from './step-signals';

/** How long a sent effect may wait for its receipt when the channel does not say. */
const defaultReceiptTimeoutMs = 24 * 3_600_000;

/**
 * One running attempt: its fence, its abort state and whether its effect started. Its abort
 * controller's signal and its logger are made on first use (the signal when the step reads
 * it, the logger when a line is written): most attempts of fast steps need neither.
 */
export class Attempt implements AttemptOwner {
  readonly fence: LeaseFence;
  private readonly controller = new AbortController();
  private abortedWith: StepAbort | null = null;
  private taskLoggerOrNull: Logger | null = null;
  effectStarted = false;
  /** The edge its result wrote, once written (null until then, or if none was). */
  writtenEdge: TaskEdge | null = null;
  /** Monotonic time of the claim: a prefetched attempt's deadline keeps running while it waits. */
  private readonly claimedAt = performance.now();
  /**
   * Monotonic time by which the database had last extended the lease (the claim, then each
   * renewal's send time): the lease runs at least `leaseMs` from here, whatever the clocks say.
   */
  leaseConfirmedAt = this.claimedAt;
  private settled = false;
  private writing: Promise<void> = Promise.resolve();
  /**
   * Its workflow's stored trace context, only when a tracer provider is registered (R57): as
   * the claim returned it, or else read.
   */
  private readonly traceParent: TraceParentRead | Promise<TraceParentRead> | null;
  private span: AttemptSpan | null = null;
  private outcome: HandlerOutcome | null = null;
  /** Why its result wrote no edge, when the write refused it. */
  private refusedAs: ResultRefusal | null = null;
  private thrown: unknown;

  constructor(
    private readonly context: EngineContext,
    private readonly resultWriter: ResultWriter,
    readonly claimed: ClaimedTask,
  ) {
    this.fence = {
      taskId: claimed.task.id,
      holder: context.holder,
      epoch: claimed.task.leaseEpoch,
    };
    this.traceParent = !tracerRegistered()
      ? null
      : claimed.traceParent === undefined
        ? traceParentOf(context.db, claimed.task.id)
        : { ok: true, parent: claimed.traceParent };
  }

  get logger(): Logger {
    const { task } = this.claimed;
    this.taskLoggerOrNull ??= taskLogger(this.context.rootLogger, {
      holder: this.context.holder,
      workflowId: task.workflowId,
      taskId: task.id,
      attempt: task.attempt,
      step: task.step,
    });
    return this.taskLoggerOrNull;
  }

  /** Aborted when the lease is lost, a cancel is requested, the attempt times out or the service stops. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.abortedWith !== null;
  }

  abort(reason: AbortReason): void {
    if (this.abortedWith !== null) return;
    this.abortedWith = new StepAbort(reason);
    this.controller.abort(this.abortedWith);
  }

  get abortReason(): AbortReason | null {
    return this.abortedWith?.reason ?? null;
  }

  /**
   * Runs the step and hands its result to the resultWriter; never throws. Resolves when the
   * handler is done, before the result is written (see `written`): the worker frees the slot
   * then, so the next claim overlaps this write.
   */
  async run(): Promise<void> {
    if (this.traceParent === null) return this.runHandler();
    const read = this.traceParent instanceof Promise ? await this.traceParent : this.traceParent;
    if (!read.ok) {
      this.logger.warn({ err: read.error }, 'could not read the trace context: a new trace');
    }
    const span = new AttemptSpan(this.claimed, read.ok ? read.parent : null);
    this.span = span;
    try {
      await this.runHandler();
    } finally {
      // Ended with the edge its result wrote, once written.
      void this.written.then(() =>
        span.end(this.writtenEdge, this.outcome, this.thrown, this.refusedAs),
      );
    }
  }

  private async runHandler(): Promise<void> {
    const { step, task } = this.claimed;
    const deadlineInMs =
      this.claimed.deadlineInMs === null
        ? Number.POSITIVE_INFINITY
        : this.claimed.deadlineInMs - (performance.now() - this.claimedAt);
    const timeoutMs = Math.min(step.policy.timeoutMs, deadlineInMs);
    const timer = setTimeout(
      () => this.abort(timeoutMs < step.policy.timeoutMs ? 'deadline' : 'attempt_timeout'),
      Math.max(0, timeoutMs),
    );
    // The child logger is made only for a line that is written.
    const debug = this.context.rootLogger.isLevelEnabled('debug');
    if (debug) this.logger.debug('attempt started');
    const started = performance.now();
    try {
      const attempt = new AttemptContext(this, task, this.claimed.input, this.claimed.results);
      // Only the step's own code runs in its span's context (R57): the engine's timers and its
      // batched writes around it serve many attempts and are none's children.
      const span = this.span;
      const result = await (span === null ? step.run(attempt) : span.run(() => step.run(attempt)));
      clearTimeout(timer);
      this.observe(started, returnedOutcome(result));
      this.reportResult(result);
    } catch (error) {
      clearTimeout(timer);
      this.thrown = error;
      this.observe(started, thrownOutcome(error, this.abortReason));
      this.reportError(error);
    } finally {
      clearTimeout(timer);
      if (debug) this.logger.debug({ state: task.state }, 'attempt finished');
    }
  }

  /** Tells the engine's handler-run listeners how long the handler ran and how it ended. */
  private observe(started: number, outcome: HandlerOutcome): void {
    this.outcome = outcome;
    const runs = this.context.handlerRuns;
    if (!runs.observed) return;
    runs.report({
      workflow: this.claimed.definition.name,
      step: this.claimed.step.name,
      queue: this.claimed.task.queue,
      outcome,
      seconds: (performance.now() - started) / 1_000,
    });
  }

  /** Resolves once this attempt's result is written, or given up on (the lease then expires). */
  get written(): Promise<void> {
    return this.writing;
  }

  /** Hands the task back at shutdown if its effect has not started (R31). */
  async release(): Promise<void> {
    if (this.effectStarted || this.settled) return;
    await this.report({ type: 'release', actor: this.actor() });
  }

  private reportResult(result: unknown): void {
    if (isSnooze(result)) {
      const { forMs, untilMs, reason } = result;
      void this.report({ type: 'snooze', actor: this.actor(), forMs, untilMs, reason });
      return;
    }
    if (isSendRequest(result)) {
      this.reportSend(result.channel, result.payload);
      return;
    }
    if (isStartChildren(result)) {
      // Admitted in the transaction of the step's edge, with its parent's depth and deadline.
      const { workflow, inputs, tolerate, single, detached, maxChildren, attributes } = result;
      void this.report(
        detached
          ? { type: 'complete', actor: this.actor() }
          : { type: 'start_children', actor: this.actor(), count: inputs.length },
        {
          children: {
            workflow,
            inputs,
            tolerate,
            single,
            detached,
            maxChildren,
            attributes,
            // Its children's first attempts are the children of this attempt's span (R57).
            traceContext: this.span?.carrier ?? null,
          },
        },
      );
      return;
    }
    if (isAwaitReceipt(result)) {
      void this.report(
        { type: 'await_receipt', actor: this.actor() },
        {
          receipt: { id: result.receiptId, timeoutMs: result.timeoutMs },
        },
      );
      return;
    }
    const output = result === undefined ? null : result;
    const problem = jsonStorageProblem(output);
    if (problem !== null) {
      void this.report({
        type: 'fail',
        actor: this.actor(),
        category: 'invalid_argument',
        summary: `the step's output cannot be stored: ${problem}`,
      });
      return;
    }
    void this.report(
      { type: 'complete', actor: this.actor() },
      { outputJson: JSON.stringify(output) },
    );
  }

  /**
   * A send request (R22): the edge to `awaiting_receipt` and the outbox row commit together;
   * the dispatcher delivers after commit with the outbox id as idempotency key.
   */
  private reportSend(channelName: string, payload: unknown): void {
    const channel = this.context.channels.get(channelName);
    const problem =
      channel === undefined
        ? `the step sent to channel "${channelName}", which this engine does not have`
        : jsonStorageProblem(payload === undefined ? null : payload);
    if (problem !== null) {
      void this.report({
        type: 'fail',
        actor: this.actor(),
        category: 'invalid_argument',
        summary: problem,
      });
      return;
    }
    const outboxId = newId();
    void this.report(
      { type: 'await_receipt', actor: this.actor() },
      {
        receipt: { id: outboxId, timeoutMs: channel?.receiptTimeoutMs ?? defaultReceiptTimeoutMs },
        outbox: {
          id: outboxId,
          channel: channelName,
          payloadJson: JSON.stringify(payload === undefined ? null : payload),
        },
      },
    );
  }

  private reportError(error: unknown): void {
    if (error instanceof CancelConfirmed) return; // already settled at the boundary
    const reason = this.abortReason;
    if (error instanceof LeaseLost || reason === 'lease_lost') {
      this.logger.warn('lease lost: the attempt stopped and its result is dropped');
      return;
    }
    if (reason === 'shutdown') {
      // Released if nothing started; otherwise the lease runs out and the sweeper decides.
      if (!this.effectStarted) void this.report({ type: 'release', actor: this.actor() });
      return;
    }
    const classified = classifyError(error);
    const timedOut = reason === 'attempt_timeout' || reason === 'deadline';
    void this.report({
      type: 'fail',
      actor: this.actor(),
      category: timedOut ? 'timeout' : classified.category,
      summary: timedOut
        ? `${reason === 'deadline' ? 'the deadline' : `the attempt timeout (${this.claimed.step.policy.timeoutMs} ms)`} passed: ${classified.summary}`
        : classified.summary,
      ...(classified.retryAfterMs === undefined ? {} : { retryAfterMs: classified.retryAfterMs }),
    });
  }

  /** Queues the attempt's one result for the resultWriter; never rejects. */
  private report(event: TaskEvent, extra?: EventRequest['extra']): Promise<void> {
    if (this.settled) return this.writing;
    this.settled = true;
    this.writing = this.write(event, extra);
    return this.writing;
  }

  private async write(event: TaskEvent, extra: EventRequest['extra'] | undefined): Promise<void> {
    try {
      const outcome = await this.resultWriter.settle({
        taskId: this.fence.taskId,
        workflowId: this.claimed.task.workflowId,
        event,
        fence: this.fence,
        awaitedChild: this.claimed.awaitedChild,
        ...(extra === undefined ? {} : { extra }),
        ...(promotesStepDecidedInFull(this.claimed.definition, this.claimed.step.name)
          ? { decideInFull: true as const }
          : {}),
      });
      if (outcome.kind === 'applied') {
        this.writtenEdge = outcome.edge;
        if (this.context.rootLogger.isLevelEnabled('info'))
          this.logger.info(
            {
              from: outcome.edge.from,
              to: outcome.edge.to,
              reason: outcome.edge.reason,
              errorCategory: outcome.edge.errorCategory,
            },
            `${outcome.edge.from} → ${outcome.edge.to} (${outcome.edge.reason})`,
          );
      } else if (outcome.kind === 'stale') {
        this.refusedAs = 'stale';
        this.logger.warn(
          { event: event.type },
          'stale writer: the lease was lost before the result was written; nothing changed',
        );
      } else if (outcome.kind === 'refused') {
        this.refusedAs = 'refused';
        this.logger.warn(
          { event: event.type, refusal: outcome.refusal },
          'the state machine refused the result',
        );
      }
    } catch (error) {
      this.logger.error(
        { err: error, event: event.type },
        'could not write the result; the lease will expire',
      );
    }
  }

  private actor(): Actor {
    return { kind: 'worker', name: this.context.holder };
  }

  /** A write of this attempt's task row, fenced on its lease (R7); a boundary confirms a cancel (R13). */
  async fencedWrite(change: FencedChange): Promise<void> {
    if (this.abortReason === 'lease_lost') throw new LeaseLost();
    const state = await taskWriteFenced(this.context.db, this.fence, change);
    if (state === null) {
      this.abort('lease_lost');
      throw new LeaseLost();
    }
    if (change.effectStarted) this.effectStarted = true;
    if (state === 'cancel_requested' && change.effectStarted) {
      // A boundary: confirm the cancel here, before any further effect (R13).
      await this.report({ type: 'boundary', actor: this.actor() });
      this.abort('cancel_requested');
      throw new CancelConfirmed();
    }
  }
}

export { holdsLease } from '../decision/holds-lease';
