import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import type { TraceCarrier } from '../../db/schema';
import { workflowTraceContexts } from '../../db/tracing/trace-contexts';
import type { EngineContext } from '../context';
import type { SendEventAnswer } from '../events/event-answers';
import {
  causewayTracerName,
  linksTo,
  spanAttributes,
  storedTraceContext,
  tracerRegistered,
} from './trace-context';

/**
 * Records the waits a send completed (R57): one `causeway.step` span per completed wait, with
 * reason `event_received`, in the trace of the waiting workflow (a child of the context it was
 * submitted in, as its steps' first attempts are) and linked to the sender's span. A link, not
 * a parent: one event may complete the waits of many workflows, and each workflow's trace
 * keeps its whole story. Repeats of a stored event record nothing: their waits were recorded
 * by the send that completed them. Never throws: the send has committed.
 */
export async function completedWaitSpans(
  context: Pick<EngineContext, 'db' | 'logger'>,
  answers: readonly SendEventAnswer[],
  sender: TraceCarrier,
): Promise<void> {
  if (!tracerRegistered()) return;
  const completed = answers
    .filter((answer) => !answer.deduplicated)
    .flatMap((answer) => answer.tasks.map((task) => ({ eventId: answer.eventId, task })));
  if (completed.length === 0) return;
  let stored: ReadonlyMap<string, TraceCarrier>;
  try {
    stored = await workflowTraceContexts(context.db, [
      ...new Set(completed.map(({ task }) => task.workflowId)),
    ]);
  } catch (error) {
    context.logger.warn({ err: error }, 'could not read the waiting workflows’ trace contexts');
    stored = new Map();
  }
  const links = linksTo(storedTraceContext(sender));
  const tracer = trace.getTracer(causewayTracerName);
  for (const { eventId, task } of completed) {
    const carrier = stored.get(task.workflowId);
    const span = tracer.startSpan(
      'causeway.step',
      {
        attributes: {
          [spanAttributes.workflowId]: task.workflowId,
          [spanAttributes.taskId]: task.taskId,
          [spanAttributes.step]: task.step,
          [spanAttributes.reason]: 'event_received',
          [spanAttributes.eventId]: eventId,
        },
        links,
      },
      carrier === undefined ? ROOT_CONTEXT : storedTraceContext(carrier),
    );
    span.end();
  }
}
