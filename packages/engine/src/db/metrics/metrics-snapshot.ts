import type { Kysely } from 'kysely';
import type { CausewayDatabase } from '../schema';
import { type EventWait, eventWaitsRead } from './event-waits';
import { type LeaseHolder, leaseHoldersRead } from './lease-holders';
import { type TaskStateCount, taskStateCountsRead } from './live-task-states';
import { type OutboxBacklog, outboxBacklogRead } from './outbox-backlog';
import { type ReadyQueue, readyQueuesRead } from './ready-queues';
import { type ScheduleLag, scheduleLagRead } from './schedule-lag';

/** What the metrics' gauges show, read at one moment. */
export interface MetricsSnapshot {
  readonly taskStates: readonly TaskStateCount[];
  readonly readyQueues: readonly ReadyQueue[];
  readonly leaseHolders: readonly LeaseHolder[];
  readonly outbox: readonly OutboxBacklog[];
  readonly eventWaits: readonly EventWait[];
  readonly scheduleLag: readonly ScheduleLag[];
}

/**
 * Every gauge read in one read-only snapshot, so they agree with each other (the ready tasks
 * are among the queued ones). Each statement reads live rows through a partial index only.
 */
export function metricsSnapshotRead(db: Kysely<CausewayDatabase>): Promise<MetricsSnapshot> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (tx) => ({
      taskStates: await taskStateCountsRead(tx),
      readyQueues: await readyQueuesRead(tx),
      leaseHolders: await leaseHoldersRead(tx),
      outbox: await outboxBacklogRead(tx),
      eventWaits: await eventWaitsRead(tx),
      scheduleLag: await scheduleLagRead(tx),
    }));
}

export type { EventWait, LeaseHolder, OutboxBacklog, ReadyQueue, ScheduleLag, TaskStateCount };
