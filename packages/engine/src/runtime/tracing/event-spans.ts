import { ROOT_CONTEXT } from '@opentelemetry/api';
import type { Db } from '../../db/database';
import type { TraceCarrier } from '../../db/schema';
import { waitTraceContexts, workflowTraceContexts } from '../../db/tracing/trace-contexts';
import type { SendEventAnswer } from '../events/event-answers';
import {
  causewayTracer,
  linksTo,
  spanAttributes,
  storedTraceContext,
  tracerRegistered,
} from './trace-context';

/** A wait an event completed: the event, and the waiting task. */
export interface CompletedWait {
  readonly eventId: string;
  readonly workflowId: string;
  readonly taskId: string;
  readonly step: string;
}

/** What recording a wait's span needs: the database, and where a failed read is told. */
export interface WaitSpanContext {
  readonly db: Db;
  readonly logger?: { warn(fields: object, message: string): void };
}

/**
 * Records the waits a send completed (R57): one `causeway.step` span per completed wait, with
 * reason `event_received`, in the trace of the waiting workflow (a child of the context it was
 * submitted in, as its steps' first attempts are) and linked to the sender's span. A link, not
 * a parent: one event may complete the waits of many workflows, and each workflow's trace
 * keeps its whole story. Repeats of a stored event record nothing: their waits were recorded
 * by the send that completed them. Never throws: the send has committed.
 */
export async function completedWaitSpans(
  context: WaitSpanContext,
  answers: readonly SendEventAnswer[],
  sender: TraceCarrier,
): Promise<void> {
  if (!tracerRegistered()) return;
  const completed = answers
    .filter((answer) => !answer.deduplicated)
    .flatMap((answer) => answer.tasks.map((task) => ({ eventId: answer.eventId, ...task })));
  if (completed.length === 0) return;
  const workflowIds = [...new Set(completed.map((wait) => wait.workflowId))];
  const stored = await readOrNothing(
    context,
    () => workflowTraceContexts(context.db, workflowIds),
    new Map<string, TraceCarrier>(),
  );
  waitSpans(completed, stored, () => sender);
}

/**
 * Records the waits events stored before them completed (R37, R54): the same span as a send's
 * (`completedWaitSpans`), linked to the context the event's sender stored with it. An event
 * sent outside any span stored none, and its waits record nothing, as at its send. Called once
 * the transaction that completed them has committed; never throws.
 */
export async function storedEventWaitSpans(
  context: WaitSpanContext,
  waits: readonly CompletedWait[],
): Promise<void> {
  if (!tracerRegistered() || waits.length === 0) return;
  const stored = await readOrNothing(
    context,
    () =>
      waitTraceContexts(
        context.db,
        [...new Set(waits.map((wait) => wait.workflowId))],
        [...new Set(waits.map((wait) => wait.eventId))],
      ),
    null,
  );
  if (stored === null) return;
  const sent = waits.filter((wait) => stored.events.has(wait.eventId));
  waitSpans(sent, stored.workflows, (eventId) => stored.events.get(eventId));
}

/** The read's answer, or `fallback` once its failure is logged: spans never fail a write. */
async function readOrNothing<Read, Fallback>(
  context: WaitSpanContext,
  read: () => Promise<Read>,
  fallback: Fallback,
): Promise<Read | Fallback> {
  try {
    return await read();
  } catch (error) {
    context.logger?.warn({ err: error }, 'could not read the trace contexts of completed waits');
    return fallback;
  }
}

/**
 * One `causeway.step` span per wait, reason `event_received`: under its workflow's stored
 * context (a new trace when it has none), linked to the span that sent its event.
 */
function waitSpans(
  waits: readonly CompletedWait[],
  workflowContexts: ReadonlyMap<string, TraceCarrier>,
  senderOf: (eventId: string) => TraceCarrier | undefined,
): void {
  const tracer = causewayTracer();
  for (const wait of waits) {
    const carrier = workflowContexts.get(wait.workflowId);
    const sender = senderOf(wait.eventId);
    const span = tracer.startSpan(
      'causeway.step',
      {
        attributes: {
          [spanAttributes.workflowId]: wait.workflowId,
          [spanAttributes.taskId]: wait.taskId,
          [spanAttributes.step]: wait.step,
          [spanAttributes.reason]: 'event_received',
          [spanAttributes.eventId]: wait.eventId,
        },
        links: sender === undefined ? [] : linksTo(storedTraceContext(sender)),
      },
      carrier === undefined ? ROOT_CONTEXT : storedTraceContext(carrier),
    );
    span.end();
  }
}
