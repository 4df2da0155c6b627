import type { ColumnType, Generated } from 'kysely';

/** Kysely's view of Causeway's tables (snake_case stays in this folder; rows.ts maps it). */
export interface CausewayDatabase {
  causeway_clock: ClockTable;
  causeway_workflows: WorkflowTable;
  causeway_tasks: TaskTable;
  causeway_transitions: TransitionTable;
  causeway_events: EventTable;
  causeway_event_deliveries: EventDeliveryTable;
  causeway_workers: WorkerTable;
  causeway_stale_results: StaleResultTable;
  causeway_workflow_attributes: WorkflowAttributeTable;
  causeway_workflow_versions: WorkflowVersionTable;
}

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json = ColumnType<unknown, string, string>;

/** A trace context as the application's propagator writes it: `traceparent`, `tracestate` (R57). */
export type TraceCarrier = Readonly<Record<string, string>>;

export interface ClockTable {
  singleton: Generated<boolean>;
  offset_ms: ColumnType<string, number | string, number | string>;
}

export interface WorkflowTable {
  id: string;
  name: string;
  state: string;
  input: Json;
  idempotency_key: string | null;
  /** The workflow's steps at submit, comma-separated (null for rows not written by a submit). */
  steps: string | null;
  /** The definition's version it was accepted under (R54); null for rows stored before 0036. */
  version: ColumnType<string | null, string | null | undefined, never>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** `state` when it is a rare one (cancel_requested, cancelled, dead), else null: generated (0021). */
  rare_state: ColumnType<string | null, never, never>;
  /** A child workflow's parent workflow, parent task, index and root (R43); null for a root. */
  parent_workflow_id: ColumnType<string | null, string | null | undefined, never>;
  parent_task_id: ColumnType<string | null, string | null | undefined, never>;
  child_index: ColumnType<number | null, number | null | undefined, never>;
  root_workflow_id: ColumnType<string | null, string | null | undefined, never>;
  /** 0 for a root, its parent's + 1 for a child (at most 10, R48). */
  depth: ColumnType<number, number | undefined, never>;
  /** Started with `{ detached: true }`: its parent never awaits it (R46). */
  detached: ColumnType<boolean, boolean | undefined, never>;
  /** A replay of its parent step started a new child in its place (R47). */
  replaced: Generated<boolean>;
  /** A debounced workflow's key, its burst's first submit and its definition's times (R52). */
  debounce_key: ColumnType<string | null, string | null | undefined, never>;
  debounce_burst_started_at: ColumnType<Timestamp | null, never, never>;
  debounce_quiet_ms: ColumnType<number | null, number | null | undefined, never>;
  debounce_max_wait_ms: ColumnType<number | null, number | null | undefined, never>;
  /** The trace context it was submitted in, or its starting attempt's for a child (R57). */
  trace_context: ColumnType<TraceCarrier | null, string | null | undefined, never>;
  /** Its searchable attributes (R55), fixed at admission; null when it has none (0034). */
  attributes: ColumnType<unknown, string | null | undefined, never>;
}

/** One row per attribute of a workflow, for finding it (R55, 0034). */
export interface WorkflowAttributeTable {
  /** `causeway_attribute_term(key, value)`: the key, '=', the value as jsonb text. */
  term: string;
  /** The workflow's created_at. */
  created_at: Timestamp;
  workflow_id: string;
}

export interface TaskTable {
  id: string;
  workflow_id: string;
  step: string;
  queue: string;
  state: string;
  attempt: Generated<number>;
  max_attempts: number;
  replay_count: Generated<number>;
  run_at: Timestamp | null;
  /** Seconds of backlog it may jump in its queue (R49); claims order by `causeway_claim_at`. */
  priority: Generated<number>;
  /** Its concurrency slot (R50): set at admission, all three or none. */
  concurrency_group: ColumnType<string | null, string | null | undefined, never>;
  concurrency_key: ColumnType<string | null, string | null | undefined, never>;
  concurrency_limit: ColumnType<number | null, number | null | undefined, never>;
  /** What its claim spends of a rate limit (R51): set at admission, all three or none. */
  rate_name: ColumnType<string | null, string | null | undefined, never>;
  rate_key: ColumnType<string | null, string | null | undefined, never>;
  rate_cost: ColumnType<number | null, number | null | undefined, never>;
  deadline_at: Timestamp | null;
  lease_holder: string | null;
  lease_epoch: ColumnType<string, number | string | undefined, number | string>;
  lease_expires_at: Timestamp | null;
  effect_started: Generated<boolean>;
  evidence: ColumnType<string | null, string | null | undefined, string | null>;
  checkpoints: ColumnType<Record<string, unknown>, string | undefined, string>;
  progress: ColumnType<unknown, string | null | undefined, string | null>;
  output: ColumnType<unknown, string | null | undefined, string | null>;
  receipt_id: string | null;
  receipt_deadline_at: Timestamp | null;
  last_error_category: string | null;
  last_error: string | null;
  cancel_asked_at: Timestamp | null;
  cancel_asked_by: string | null;
  /** The event an event step waits for, and its wait (R37, R39): set only while `waiting`. */
  event_name: string | null;
  event_key: string | null;
  wait_since: Timestamp | null;
  wait_timeout_at: Timestamp | null;
  /** A step's children: the tally of their outcomes and what its output lists (R43–R45). */
  children_total: number | null;
  children_succeeded: number | null;
  children_failed: number | null;
  children_allowed_failures: number | null;
  children_output: 'result' | 'outcome' | 'single' | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface TransitionTable {
  id: Generated<string>;
  workflow_id: string;
  task_id: string | null;
  step: string | null;
  from_state: string | null;
  to_state: string;
  reason: string;
  error_category: string | null;
  error_summary: string | null;
  actor: string;
  attempt: number;
  at: Timestamp;
  detail: ColumnType<Record<string, unknown> | null, string | null, never>;
}

/** A worker's result refused because its claim's lease was lost (0033, R56). */
export interface StaleResultTable {
  task_id: string;
  workflow_id: string;
  lease_epoch: ColumnType<string, number | string, never>;
  holder: string;
  refused_at: Timestamp;
}

export interface EventTable {
  id: string;
  name: string;
  key: string;
  payload: Json;
  idempotency_key: string | null;
  sent_by: string;
  /** The sender's reason (R38), or null; at most 1,000 characters. */
  reason: string | null;
  received_at: Timestamp;
  /** The transaction that stored it, from the column's default (0023); null before 0023. */
  xact: ColumnType<string | null, never, never>;
  /** The trace context it was sent in (R57), or null. */
  trace_context: ColumnType<TraceCarrier | null, string | null | undefined, never>;
}

export interface EventDeliveryTable {
  event_id: string;
  task_id: string;
  workflow_id: string;
  delivered_at: Timestamp;
}

/** The worker registry (0014_workers.sql): one row per engine running workers. */
export interface WorkerTable {
  holder: string;
  host: string;
  pid: number;
  queues: ColumnType<readonly { name: string; slots: number }[], string, string>;
  /** What it defines: each version (R54; absent in rows of older engines) with its steps. */
  workflows: ColumnType<
    readonly { name: string; version?: string; latest?: boolean; steps: readonly string[] }[],
    string,
    string
  >;
  sweeper: boolean;
  engine_version: string;
  app_version: string | null;
  started_at: Timestamp;
  heartbeat_at: Timestamp;
  stale_at: Timestamp;
}

/** Every version a worker ever served (0036, R54): what `definitions` lists once drained. */
export interface WorkflowVersionTable {
  name: string;
  version: string;
  first_served_at: Timestamp;
  last_served_at: Timestamp;
}
