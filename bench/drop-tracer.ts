/**
 * `BENCH_TRACER=drop`: the worker processes register an OpenTelemetry SDK as an application
 * would (a tracer provider, a batching processor, the async-hooks context manager and the W3C
 * propagator) whose exporter drops every span, so a run measures what tracing costs the
 * engine (R57) without an exporter's own cost. `BENCH_TRACER=context` registers only the
 * context manager, which every SDK set-up brings and which slows every promise of the
 * process: the part of the cost no engine can avoid.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  type ExportResult,
  ExportResultCode,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';

class DroppingExporter implements SpanExporter {
  export(_spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}

export function registerContextManager(): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}

export function registerDroppingTracer(): void {
  const provider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(new DroppingExporter())],
  });
  registerContextManager();
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
}
