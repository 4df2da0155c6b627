import type { TaskEdge } from '@causeway/workflow/internal';
import {
  type Context,
  context,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { TraceCarrier } from '../../db/schema';
import type { TaskTraceParent } from '../../db/tracing/trace-contexts';
import type { ClaimedTask } from '../claim/claimed-task';
import { type HandlerOutcome, handlerOutcomeMeanings } from '../worker/handler-runs';
import {
  causewayTracer,
  linksTo,
  spanAttributes,
  storedTraceContext,
  traceCarrierOf,
} from './trace-context';

/**
 * Why an attempt's result wrote no edge: `stale`, its lease was lost first (the attempt
 * ledger's stale attempt, R56); `refused`, the machine refused it in the task's state.
 */
export type ResultRefusal = 'stale' | 'refused';

const refusalMeanings: Readonly<Record<ResultRefusal, string>> = {
  stale: 'the lease was lost before the result was written; nothing changed',
  refused: 'the state machine refused the result; nothing changed',
};

/** Handler outcomes that are the attempt's failure, whatever edge follows. */
const failedOutcomes: ReadonlySet<HandlerOutcome> = new Set(['failed', 'timed_out', 'lease_lost']);

/**
 * One attempt's span, `causeway.step` (R57). The first attempt of a task (attempt 1, never
 * replayed) is a child of the context its workflow was submitted in, so the submit's trace
 * holds each step's first try; a retry, a re-claim after a lost lease and every attempt of a
 * replay start a new trace linked to that context, so a trace keeps to one try and a retry
 * hours later does not stretch the submit's. The handler runs in the span's context, so its
 * own spans are the span's children; the span ends once the attempt's edge is written, with
 * that edge's reason.
 */
export class AttemptSpan {
  /** The span's context: what the handler runs in, and what children it starts record. */
  readonly context: Context;
  private readonly span: Span;
  private carrierOrNull: TraceCarrier | null | undefined;

  constructor(claimed: ClaimedTask, parent: TaskTraceParent | null) {
    const { task } = claimed;
    const stored = parent === null ? null : storedTraceContext(parent.carrier);
    const first = parent !== null && task.attempt <= 1 && parent.replayCount === 0;
    const under = first && stored !== null ? stored : ROOT_CONTEXT;
    this.span = causewayTracer().startSpan(
      'causeway.step',
      {
        attributes: {
          [spanAttributes.workflowId]: task.workflowId,
          [spanAttributes.workflowName]: claimed.definition.name,
          [spanAttributes.taskId]: task.id,
          [spanAttributes.step]: task.step,
          [spanAttributes.attempt]: task.attempt,
        },
        links: stored === null || first ? [] : linksTo(stored),
      },
      under,
    );
    this.context = trace.setSpan(under, this.span);
  }

  /**
   * The span's context as the propagator writes it, for the children the attempt starts:
   * written when first asked, since few attempts start children.
   */
  get carrier(): TraceCarrier | null {
    if (this.carrierOrNull === undefined) this.carrierOrNull = traceCarrierOf(this.context);
    return this.carrierOrNull;
  }

  /** Runs the handler in the span's context. */
  run<Result>(handler: () => Result): Result {
    return context.with(this.context, handler);
  }

  /**
   * Ends the span with the edge the attempt wrote (null when none was: its lease was lost or
   * its result refused, and `refused` says which) and how its handler ended; the status is an
   * error when it failed, or when its result was refused: a step that ran to its end without
   * its result counting may have had its effect twice, which is what a person looks for.
   */
  end(
    edge: TaskEdge | null,
    outcome: HandlerOutcome | null,
    thrown: unknown,
    refused: ResultRefusal | null,
  ): void {
    if (edge !== null) this.span.setAttribute(spanAttributes.reason, edge.reason);
    if (outcome !== null) this.span.setAttribute(spanAttributes.outcome, outcome);
    if (refused !== null) this.span.setAttribute(spanAttributes.refused, refused);
    const failed =
      (edge !== null && edge.errorCategory !== null) ||
      (outcome !== null && failedOutcomes.has(outcome));
    if (failed || refused !== null) {
      if (thrown instanceof Error) this.span.recordException(thrown);
      this.span.setStatus({
        code: SpanStatusCode.ERROR,
        message:
          edge?.errorSummary ??
          (refused !== null
            ? refusalMeanings[refused]
            : outcome === null
              ? 'failed'
              : handlerOutcomeMeanings[outcome]),
      });
    }
    this.span.end();
  }
}
