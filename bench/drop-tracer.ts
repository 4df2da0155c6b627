/**
 * `BENCH_TRACER=drop`: the worker processes register an OpenTelemetry SDK as an application
 * would (a tracer provider, a batching processor, the async-hooks context manager and the W3C
 * propagator) whose exporter drops every span, so a run measures what tracing costs the
 * engine (R57) without an exporter's own cost. `BENCH_TRACER=context` registers only the
 * context manager, which every SDK set-up brings; it stays idle until something runs in a
 * context. `BENCH_TRACER=context-active` also runs once in a context, as any instrumented
 * application does at its first request: from then on Node 20's AsyncLocalStorage tracks every
 * promise of the process, whoever made it. That is the part of tracing's cost no engine can
 * avoid, since a handler must run in its span's context.
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
import { setAppSpanTracer } from './app-span';

class DroppingExporter implements SpanExporter {
  export(_spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}

export function registerContextManager(): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}

/** The context manager, made active: every promise from now on carries a context. */
export function registerActiveContextManager(): void {
  registerContextManager();
  context.with(context.active(), () => undefined);
}

/**
 * The same SDK, its provider not registered: the bench's handler makes the spans itself
 * (bench/app-span.ts) and the engine, seeing no provider, makes none.
 */
export function registerAppSpans(): void {
  const provider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(new DroppingExporter())],
  });
  registerContextManager();
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  setAppSpanTracer(provider.getTracer('bench'));
}

export function registerDroppingTracer(): void {
  const provider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(new DroppingExporter())],
  });
  registerContextManager();
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
}
