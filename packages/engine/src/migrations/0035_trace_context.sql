-- R57: traces. The trace context a workflow was submitted in (or, for a child workflow, the
-- context of the attempt that started it), and the context an event was sent in: the carrier
-- the application's propagator wrote (W3C `traceparent`, `tracestate`), or null when no span
-- was active. Read only by an engine whose application registered a tracer provider.
alter table causeway_workflows add column trace_context jsonb;
alter table causeway_events add column trace_context jsonb;
