import { context, ROOT_CONTEXT, type Tracer, trace } from '@opentelemetry/api';

/**
 * `BENCH_TRACER=app-span` (bench/drop-tracer.ts): the bench's own one-step handler makes the
 * span R57 asks of the engine, with the SDK's tracer, while the engine sees no provider and
 * traces nothing. The same span work with no engine code in it: the floor of what tracing
 * each attempt costs, to set the engine's traced W2 against.
 */
let appTracer: Tracer | null = null;

export function setAppSpanTracer(tracer: Tracer): void {
  appTracer = tracer;
}

/** Runs `handler` in a span like the engine's attempt span, when app spans are on. */
export function inAppSpan<Result>(
  attributes: Readonly<Record<string, string | number>>,
  handler: () => Result,
): Result {
  if (appTracer === null) return handler();
  const span = appTracer.startSpan('causeway.step', { attributes }, ROOT_CONTEXT);
  try {
    return context.with(trace.setSpan(ROOT_CONTEXT, span), handler);
  } finally {
    span.setAttribute('causeway.reason', 'completed');
    span.setAttribute('causeway.outcome', 'completed');
    span.end();
  }
}
