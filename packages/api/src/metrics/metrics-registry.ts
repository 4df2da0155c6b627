import type { DefinedConcurrencyGroup, MetricsSnapshot } from '@causeway/engine';
import type { RateLimit } from '@causeway/workflow';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { type MetricDefinition, metricDefinitions } from './metric-definitions';

const d = metricDefinitions;

/** The prom-client metrics of one API server, on a registry of its own. */
export function createMetricSet() {
  const registry = new Registry();
  const base = (definition: MetricDefinition) => ({
    name: definition.name,
    help: definition.help,
    labelNames: definition.labels,
    registers: [registry],
  });
  const counter = (definition: MetricDefinition) => new Counter(base(definition));
  const gauge = (definition: MetricDefinition) => new Gauge(base(definition));
  const histogram = (definition: MetricDefinition) =>
    new Histogram({ ...base(definition), buckets: [...(definition.buckets ?? [])] });
  return {
    registry,
    taskTransitions: counter(d.taskTransitions),
    taskTimeInState: histogram(d.taskTimeInState),
    workflowTransitions: counter(d.workflowTransitions),
    workflowTimeInState: histogram(d.workflowTimeInState),
    logStart: gauge(d.logStart),
    logCounted: gauge(d.logCounted),
    tasks: gauge(d.tasks),
    taskOldestInState: gauge(d.taskOldestInState),
    readyTasks: gauge(d.readyTasks),
    readyOldestAge: gauge(d.readyOldestAge),
    leases: gauge(d.leases),
    leaseOldestAge: gauge(d.leaseOldestAge),
    leaseNextExpiry: gauge(d.leaseNextExpiry),
    outboxPending: gauge(d.outboxPending),
    outboxOldestAge: gauge(d.outboxOldestAge),
    eventWaits: gauge(d.eventWaits),
    eventWaitOldestAge: gauge(d.eventWaitOldestAge),
    scheduleLag: gauge(d.scheduleLag),
    workers: gauge(d.workers),
    queueWorkers: gauge(d.queueWorkers),
    queueSlots: gauge(d.queueSlots),
    queuePaused: gauge(d.queuePaused),
    concurrencySlotsHeld: gauge(d.concurrencySlotsHeld),
    concurrencyLimit: gauge(d.concurrencyLimit),
    rateLimitSpent: gauge(d.rateLimitSpent),
    rateLimit: gauge(d.rateLimit),
    rateLimitedKeys: gauge(d.rateLimitedKeys),
    replicaLagBytes: gauge(d.replicaLagBytes),
    replicaLagSeconds: gauge(d.replicaLagSeconds),
    handlerDuration: histogram(d.handlerDuration),
  };
}

export type MetricSet = ReturnType<typeof createMetricSet>;

/**
 * Shows a snapshot of the live rows in the gauges. Each gauge is reset first: a queue, holder
 * or event with no live rows left has no series, rather than its last value. `groups` are the
 * concurrency groups the engine's definitions declare, `rateLimits` the rate limits it declares:
 * they have series even while idle.
 */
export function showSnapshot(
  metrics: MetricSet,
  snapshot: MetricsSnapshot,
  groups: readonly DefinedConcurrencyGroup[],
  rateLimits: readonly RateLimit[] = [],
): void {
  const live = [
    metrics.tasks,
    metrics.taskOldestInState,
    metrics.readyTasks,
    metrics.readyOldestAge,
    metrics.leases,
    metrics.leaseOldestAge,
    metrics.leaseNextExpiry,
    metrics.outboxPending,
    metrics.outboxOldestAge,
    metrics.eventWaits,
    metrics.eventWaitOldestAge,
    metrics.scheduleLag,
    metrics.queueWorkers,
    metrics.queueSlots,
    metrics.queuePaused,
    metrics.concurrencySlotsHeld,
    metrics.concurrencyLimit,
    metrics.rateLimitSpent,
    metrics.rateLimit,
    metrics.rateLimitedKeys,
  ];
  for (const gauge of live) gauge.reset();
  const show = <Row extends { count: number; oldestSeconds: number }>(
    rows: readonly Row[],
    count: Gauge,
    age: Gauge,
    labelsOf: (row: Row) => Record<string, string>,
  ) => {
    for (const row of rows) {
      count.set(labelsOf(row), row.count);
      age.set(labelsOf(row), row.oldestSeconds);
    }
  };
  show(snapshot.taskStates, metrics.tasks, metrics.taskOldestInState, ({ state, queue }) => ({
    state,
    queue,
  }));
  show(snapshot.readyQueues, metrics.readyTasks, metrics.readyOldestAge, ({ queue }) => ({
    queue,
  }));
  show(snapshot.leaseHolders, metrics.leases, metrics.leaseOldestAge, ({ holder }) => ({ holder }));
  for (const row of snapshot.leaseHolders) {
    metrics.leaseNextExpiry.set({ holder: row.holder }, row.nextExpirySeconds);
  }
  show(snapshot.outbox, metrics.outboxPending, metrics.outboxOldestAge, ({ channel }) => ({
    channel,
  }));
  show(snapshot.eventWaits, metrics.eventWaits, metrics.eventWaitOldestAge, ({ event }) => ({
    event,
  }));
  for (const row of snapshot.scheduleLag) {
    metrics.scheduleLag.set({ schedule: row.schedule }, row.lagSeconds);
  }
  metrics.workers.set(snapshot.workers);
  for (const row of snapshot.queueSlots) {
    metrics.queueWorkers.set({ queue: row.queue }, row.workers);
    metrics.queueSlots.set({ queue: row.queue }, row.slots);
  }
  const paused = new Set(snapshot.pausedQueues);
  const queues = [...snapshot.queueSlots, ...snapshot.readyQueues].map((row) => row.queue);
  for (const queue of new Set([...queues, ...paused])) {
    metrics.queuePaused.set({ queue }, paused.has(queue) ? 1 : 0);
  }
  for (const group of groups) {
    metrics.concurrencyLimit.set({ group: group.group }, group.limit);
    metrics.concurrencySlotsHeld.set({ group: group.group }, 0);
  }
  for (const row of snapshot.concurrencySlots) {
    metrics.concurrencySlotsHeld.set({ group: row.group }, row.held);
  }
  for (const limit of rateLimits) metrics.rateLimit.set({ name: limit.name }, limit.limit);
  for (const row of snapshot.rateLimits) {
    metrics.rateLimitSpent.set({ name: row.name }, row.spent);
    metrics.rateLimitedKeys.set({ name: row.name }, row.limitedKeys);
  }
}
