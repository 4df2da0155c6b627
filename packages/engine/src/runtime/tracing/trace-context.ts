import {
  type Context,
  context,
  type Link,
  ProxyTracerProvider,
  propagation,
  ROOT_CONTEXT,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import type { TraceCarrier } from '../../db/schema';

/** The provider the api delegates to while the application has registered none. */
const noopTracerProvider = new ProxyTracerProvider().getDelegate();

/**
 * Whether the application registered a tracer provider (R57). Without one the engine reads
 * no stored context and starts no span: the api's no-op would be cheap, the reads would not.
 * A provider registered through another copy of the api counts as registered.
 */
export function tracerRegistered(): boolean {
  const provider = trace.getTracerProvider();
  return (
    !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== noopTracerProvider
  );
}

/**
 * The active span's context as the application's propagator writes it (W3C `traceparent` and
 * `tracestate` with the usual SDK setup), or null when no span is active or the propagator
 * writes nothing: then nothing is stored.
 */
export function activeTraceCarrier(): TraceCarrier | null {
  return traceCarrierOf(context.active());
}

/** `activeTraceCarrier` for a given context. */
export function traceCarrierOf(active: Context): TraceCarrier | null {
  const spanContext = trace.getSpanContext(active);
  if (spanContext === undefined || !trace.isSpanContextValid(spanContext)) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  return Object.keys(carrier).length === 0 ? null : carrier;
}

/** Runs `work` in the root context: what it starts, and all that follows, has no active span. */
export function outsideAnyTrace<Result>(work: () => Result): Result {
  return context.with(ROOT_CONTEXT, work);
}

/** The context a stored carrier stands for, to start a span under. */
export function storedTraceContext(carrier: TraceCarrier): Context {
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/** A link to the span a context holds, or none when it holds no valid one. */
export function linksTo(linked: Context): Link[] {
  const spanContext = trace.getSpanContext(linked);
  return spanContext !== undefined && trace.isSpanContextValid(spanContext)
    ? [{ context: spanContext }]
    : [];
}

/** The name of the tracer Causeway's spans come from. */
export const causewayTracerName = '@causeway/engine';

let cachedTracer: { readonly provider: TracerProvider; readonly tracer: Tracer } | null = null;

/**
 * Causeway's tracer from the registered provider, asked of the provider once per provider: a
 * provider's `getTracer` builds a key and looks it up on every call, once per attempt.
 */
export function causewayTracer(): Tracer {
  const global = trace.getTracerProvider();
  const provider = global instanceof ProxyTracerProvider ? global.getDelegate() : global;
  if (cachedTracer?.provider !== provider) {
    cachedTracer = { provider, tracer: provider.getTracer(causewayTracerName) };
  }
  return cachedTracer.tracer;
}

/** The attribute names of Causeway's spans. */
export const spanAttributes = Object.freeze({
  workflowId: 'causeway.workflow.id',
  workflowName: 'causeway.workflow.name',
  taskId: 'causeway.task.id',
  step: 'causeway.step',
  attempt: 'causeway.attempt',
  reason: 'causeway.reason',
  outcome: 'causeway.outcome',
  refused: 'causeway.result.refused',
  eventId: 'causeway.event.id',
} as const);
