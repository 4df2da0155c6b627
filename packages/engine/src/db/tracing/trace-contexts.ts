import { sql } from 'kysely';
import type { Db } from '../database';
import type { TraceCarrier } from '../schema';

/** Where an attempt's span hangs (R57): its workflow's stored trace context and replay round. */
export interface TaskTraceParent {
  readonly carrier: TraceCarrier;
  /** How many times an operator replayed the task: a replay's attempts start new traces. */
  readonly replayCount: number;
}

/** A task's trace parent from its workflow's stored context column, null when none is stored. */
export function traceParentFromRow(
  carrier: TraceCarrier | null,
  replayCount: number,
): TaskTraceParent | null {
  return carrier === null ? null : { carrier, replayCount };
}

/**
 * The stored trace contexts of the workflows of `taskIds`, by task id; a task whose workflow
 * was submitted outside any span has none. For tasks leased by a decision in full, whose
 * claim does not return the context; read only when a tracer provider is registered.
 */
export async function taskTraceParents(
  db: Db,
  taskIds: readonly string[],
): Promise<Map<string, TaskTraceParent>> {
  const rows = await db
    .selectFrom('causeway_tasks as t')
    .innerJoin('causeway_workflows as w', 'w.id', 't.workflow_id')
    .select(['t.id', 't.replay_count', 'w.trace_context'])
    .where(sql<boolean>`t.id = any(${[...taskIds]}::uuid[])`)
    .where('w.trace_context', 'is not', null)
    .execute();
  return new Map(
    rows.map((row) => [
      row.id,
      { carrier: row.trace_context as TraceCarrier, replayCount: row.replay_count },
    ]),
  );
}

/** The stored trace contexts of `workflowIds` that have one, by workflow id. */
export async function workflowTraceContexts(
  db: Db,
  workflowIds: readonly string[],
): Promise<Map<string, TraceCarrier>> {
  if (workflowIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('causeway_workflows')
    .select(['id', 'trace_context'])
    .where(sql<boolean>`id = any(${[...workflowIds]}::uuid[])`)
    .where('trace_context', 'is not', null)
    .execute();
  return new Map(rows.map((row) => [row.id, row.trace_context as TraceCarrier]));
}

/** The stored trace contexts of waiting workflows and of the events that completed them. */
export interface WaitTraceContexts {
  readonly workflows: ReadonlyMap<string, TraceCarrier>;
  readonly events: ReadonlyMap<string, TraceCarrier>;
}

/**
 * The stored trace contexts of `workflowIds` and of `eventIds` that have one, in one statement:
 * what the spans of waits completed by stored events hang under and link to (R57).
 */
export async function waitTraceContexts(
  db: Db,
  workflowIds: readonly string[],
  eventIds: readonly string[],
): Promise<WaitTraceContexts> {
  const { rows } = await sql<{ kind: 'workflow' | 'event'; id: string; trace_context: unknown }>`
    select 'workflow' as kind, id, trace_context from causeway_workflows
      where id = any(${[...workflowIds]}::uuid[]) and trace_context is not null
    union all
    select 'event' as kind, id, trace_context from causeway_events
      where id = any(${[...eventIds]}::uuid[]) and trace_context is not null`.execute(db);
  const workflows = new Map<string, TraceCarrier>();
  const events = new Map<string, TraceCarrier>();
  for (const row of rows) {
    (row.kind === 'workflow' ? workflows : events).set(row.id, row.trace_context as TraceCarrier);
  }
  return { workflows, events };
}
