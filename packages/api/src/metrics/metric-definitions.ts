/**
 * Every metric `/metrics` serves, as data: the registry is built from it and docs/metrics.md
 * is generated from it (`pnpm generate`; a test fails when the file differs). Names follow
 * Prometheus' conventions: the `causeway_` prefix, base units (seconds), `_total` on counters.
 */
export interface MetricDefinition {
  readonly name: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly help: string;
  readonly labels: readonly string[];
  readonly buckets?: readonly number[];
  /**
   * Where the number comes from: `log`, the transition log read since this process started
   * (every engine's edges); `live`, the database's live rows at the scrape; `process`, this
   * process's own workers.
   */
  readonly source: 'log' | 'live' | 'process';
}

/**
 * Time in a state, from milliseconds (a chained claim) to a week (a wait for a person, a dead
 * task until its replay): background work spans that range, so the buckets do too.
 */
export const timeInStateBuckets: readonly number[] = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1_800, 3_600,
  7_200, 21_600, 86_400, 259_200, 604_800,
]);

/** A handler's run, from a millisecond to an hour (attempts have timeouts). */
export const handlerDurationBuckets: readonly number[] = Object.freeze([
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3_600,
]);

export const metricDefinitions = {
  taskTransitions: {
    name: 'causeway_task_transitions_total',
    type: 'counter',
    help: 'Task edges written to the transition log, by from state (none for an admission), to state and reason code.',
    labels: ['from', 'to', 'reason'],
    source: 'log',
  },
  taskTimeInState: {
    name: 'causeway_task_time_in_state_seconds',
    type: 'histogram',
    help: 'Time a task spent in a state before an edge left it, by the state left and the reason code of the edge that left it.',
    labels: ['state', 'reason'],
    buckets: timeInStateBuckets,
    source: 'log',
  },
  workflowTransitions: {
    name: 'causeway_workflow_transitions_total',
    type: 'counter',
    help: 'Workflow (parent) state changes written to the transition log, by from state (none for an admission), to state and the reason code of the task edge that caused it.',
    labels: ['from', 'to', 'reason'],
    source: 'log',
  },
  workflowTimeInState: {
    name: 'causeway_workflow_time_in_state_seconds',
    type: 'histogram',
    help: 'Time a workflow spent in a state before it changed, by the state left and the reason code of the task edge that changed it.',
    labels: ['state', 'reason'],
    buckets: timeInStateBuckets,
    source: 'log',
  },
  logStart: {
    name: 'causeway_transition_log_start_id',
    type: 'gauge',
    help: 'The transition log id after which the log counters start: the end of the log when this process began counting.',
    labels: [],
    source: 'log',
  },
  logCounted: {
    name: 'causeway_transition_log_counted_id',
    type: 'gauge',
    help: 'The transition log id up to which every row is counted (it stops moving if reading the log fails).',
    labels: [],
    source: 'log',
  },
  tasks: {
    name: 'causeway_tasks',
    type: 'gauge',
    help: 'Tasks in each live (not terminal) state, by queue.',
    labels: ['state', 'queue'],
    source: 'live',
  },
  taskOldestInState: {
    name: 'causeway_task_oldest_in_state_seconds',
    type: 'gauge',
    help: 'Seconds since the longest-standing task of each live state and queue entered that state.',
    labels: ['state', 'queue'],
    source: 'live',
  },
  readyTasks: {
    name: 'causeway_ready_tasks',
    type: 'gauge',
    help: 'Queued tasks that are due (run_at has passed): the depth of the ready queue a worker claims from.',
    labels: ['queue'],
    source: 'live',
  },
  readyOldestAge: {
    name: 'causeway_ready_oldest_age_seconds',
    type: 'gauge',
    help: 'Seconds since the longest-due ready task of the queue became due.',
    labels: ['queue'],
    source: 'live',
  },
  leases: {
    name: 'causeway_leases',
    type: 'gauge',
    help: 'Tasks whose lease the holder (host/pid/boot id of an engine) holds: leased or cancel requested.',
    labels: ['holder'],
    source: 'live',
  },
  leaseOldestAge: {
    name: 'causeway_lease_oldest_age_seconds',
    type: 'gauge',
    help: 'Seconds since the oldest lease of the holder was taken (how long its longest handler has run).',
    labels: ['holder'],
    source: 'live',
  },
  leaseNextExpiry: {
    name: 'causeway_lease_next_expiry_seconds',
    type: 'gauge',
    help: 'Seconds until the first lease of the holder runs out; it falls to zero and below when the holder stops renewing, until the sweeper decides the task.',
    labels: ['holder'],
    source: 'live',
  },
  outboxPending: {
    name: 'causeway_outbox_pending_messages',
    type: 'gauge',
    help: 'Outbox messages not yet delivered nor given up on, by channel.',
    labels: ['channel'],
    source: 'live',
  },
  outboxOldestAge: {
    name: 'causeway_outbox_oldest_pending_age_seconds',
    type: 'gauge',
    help: 'Seconds since the oldest undelivered outbox message of the channel was written.',
    labels: ['channel'],
    source: 'live',
  },
  eventWaits: {
    name: 'causeway_event_waiting_tasks',
    type: 'gauge',
    help: 'Event steps waiting for their event, by event name.',
    labels: ['event'],
    source: 'live',
  },
  eventWaitOldestAge: {
    name: 'causeway_event_wait_oldest_age_seconds',
    type: 'gauge',
    help: 'Seconds since the longest wait for the event began.',
    labels: ['event'],
    source: 'live',
  },
  scheduleLag: {
    name: 'causeway_schedule_lag_seconds',
    type: 'gauge',
    help: 'Seconds since the next tick of a running schedule was due, for each schedule that is due now (a schedule not due has no series).',
    labels: ['schedule'],
    source: 'live',
  },
  workers: {
    name: 'causeway_workers',
    type: 'gauge',
    help: 'Engines running workers whose registry row is within its age-out (they heartbeat).',
    labels: [],
    source: 'live',
  },
  queueWorkers: {
    name: 'causeway_queue_workers',
    type: 'gauge',
    help: 'Live workers that claim from the queue.',
    labels: ['queue'],
    source: 'live',
  },
  queueSlots: {
    name: 'causeway_queue_slots',
    type: 'gauge',
    help: "The live workers' slots for the queue, summed: how many of its tasks can run at once.",
    labels: ['queue'],
    source: 'live',
  },
  queuePaused: {
    name: 'causeway_queue_paused',
    type: 'gauge',
    help: 'Whether an operator paused the queue (R53): 1 while claims take nothing from it, 0 for a queue that live workers serve or that has ready tasks.',
    labels: ['queue'],
    source: 'live',
  },
  concurrencySlotsHeld: {
    name: 'causeway_concurrency_slots_held',
    type: 'gauge',
    help: "Slots of the concurrency group (R50) held by tasks, summed over its keys (never by key): leased, awaiting a receipt, or asked to cancel while keeping their lease. 0 for a group this engine's definitions declare with none held.",
    labels: ['group'],
    source: 'live',
  },
  concurrencyLimit: {
    name: 'causeway_concurrency_limit',
    type: 'gauge',
    help: "The limit of each key of the concurrency group (R50), for the groups this engine's definitions declare.",
    labels: ['group'],
    source: 'live',
  },
  rateLimitSpent: {
    name: 'causeway_rate_limit_spent',
    type: 'gauge',
    help: 'The cost the rate limit (R51) granted within its period before now (database time), summed over its keys (never by key). 0 for a declared limit nothing spent.',
    labels: ['name'],
    source: 'live',
  },
  rateLimit: {
    name: 'causeway_rate_limit',
    type: 'gauge',
    help: 'The cost each key of the rate limit (R51) may spend in any window of its period, for the limits this engine declares.',
    labels: ['name'],
    source: 'live',
  },
  rateLimitedKeys: {
    name: 'causeway_rate_limited_keys',
    type: 'gauge',
    help: 'Keys of the rate limit (R51) that no grant fits now: spent until later in the period, or paused by a step that heard "too busy".',
    labels: ['name'],
    source: 'live',
  },
  replicaLagBytes: {
    name: 'causeway_replica_lag_bytes',
    type: 'gauge',
    help: 'WAL bytes the primary has written that the read replica (host:port/database) has not replayed yet; no series without a replica, or while it does not answer.',
    labels: ['replica'],
    source: 'live',
  },
  replicaLagSeconds: {
    name: 'causeway_replica_lag_seconds',
    type: 'gauge',
    help: "Seconds since the read replica's last replayed commit while it is behind the primary; 0 when it has replayed everything.",
    labels: ['replica'],
    source: 'live',
  },
  handlerDuration: {
    name: 'causeway_handler_duration_seconds',
    type: 'histogram',
    help: "Wall time of step handlers run by this process's workers, by workflow, step and outcome.",
    labels: ['workflow', 'step', 'outcome'],
    buckets: handlerDurationBuckets,
    source: 'process',
  },
} as const satisfies Record<string, MetricDefinition>;

export type MetricKey = keyof typeof metricDefinitions;
