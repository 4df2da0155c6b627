/**
 * The OpenTelemetry SDK as an application registers it, for the trace tests (R57): a tracer
 * provider exporting to memory, the AsyncLocalStorage context manager and the W3C propagator.
 * Registered globally, once per test file (each file runs in its own process).
 */

import type { Engine } from '@causeway/engine';
import { context, propagation, type Span, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { query } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

export type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

export interface TestTracing {
  readonly exporter: InMemorySpanExporter;
  /** Runs `work` in a new active span named `name`, ended after it; answers both. */
  inSpan<Result>(
    name: string,
    work: () => Promise<Result>,
  ): Promise<{ span: Span; result: Result }>;
}

export function registerTestTracing(): TestTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const tracer = trace.getTracer('causeway-tests');
  return {
    exporter,
    inSpan: (name, work) =>
      tracer.startActiveSpan(name, async (span) => {
        try {
          return { span, result: await work() };
        } finally {
          span.end();
        }
      }),
  };
}

/** The finished `causeway.step` spans of a workflow, once there are `count` of them. */
export async function stepSpans(
  tracing: TestTracing,
  workflowId: string,
  count: number,
): Promise<ReadableSpan[]> {
  return waitFor(
    () => {
      const spans = tracing.exporter
        .getFinishedSpans()
        .filter(
          (span) =>
            span.name === 'causeway.step' && span.attributes['causeway.workflow.id'] === workflowId,
        );
      return spans.length >= count ? spans : undefined;
    },
    { description: `${count} step spans of ${workflowId}` },
  );
}

/** The spans whose parent is `parent`, by name. */
export function childrenOf(tracing: TestTracing, parent: ReadableSpan | Span): ReadableSpan[] {
  const { spanId } = parent.spanContext();
  return tracing.exporter
    .getFinishedSpans()
    .filter((span) => span.parentSpanContext?.spanId === spanId);
}

/** A workflow's stored trace context (the `trace_context` column). */
export async function storedContext(
  databaseUrl: string,
  workflowId: string,
): Promise<Record<string, string> | null> {
  const [row] = await query<{ trace_context: Record<string, string> | null }>(
    databaseUrl,
    'select trace_context from causeway_workflows where id = $1',
    [workflowId],
  );
  if (row === undefined) throw new Error(`no workflow ${workflowId}`);
  return row.trace_context;
}

/** The child workflows of `parentId`, in index order. */
export async function childWorkflowIds(databaseUrl: string, parentId: string): Promise<string[]> {
  const rows = await query<{ id: string }>(
    databaseUrl,
    'select id from causeway_workflows where parent_workflow_id = $1 order by child_index',
    [parentId],
  );
  return rows.map((row) => row.id);
}

/** The W3C `traceparent` of a span: what a carrier holds for it, sampled. */
export function traceparentOf(span: ReadableSpan | Span): string {
  const { traceId, spanId } = span.spanContext();
  return `00-${traceId}-${spanId}-01`;
}

/** The workflow once it is in `state`. */
export async function workflowIn(app: Engine, id: string, state: string) {
  return waitFor(
    async () => {
      const found = await app.getWorkflow(id);
      return found?.state === state ? found : undefined;
    },
    { description: `${id} ${state}` },
  );
}

/** Submits in a span of its own, as a request handler would: answers the span and the id. */
export async function submittedInSpan(
  tracing: TestTracing,
  app: Engine,
  name: string,
  input: unknown,
): Promise<{ submit: Span; id: string }> {
  const { span, result } = await tracing.inSpan(`submit ${name}`, () => app.submit(name, input));
  return { submit: span, id: result.workflow.id };
}
