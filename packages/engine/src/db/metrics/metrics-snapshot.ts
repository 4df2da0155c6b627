import type { RateLimit } from '@causeway/workflow';
import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../database';
import { type ConcurrencySlots, concurrencySlotsSql } from './concurrency-slots';
import { countedGroupFromRow } from './counted-group';
import { type EventWait, eventWaitsSql } from './event-waits';
import { type LeaseHolder, leaseHolderFromRow, leaseHoldersSql } from './lease-holders';
import { type TaskStateCount, taskStateCountsSql } from './live-task-states';
import { liveWorkersSql, type QueueSlots, queueSlotsSql } from './live-workers';
import { type OutboxBacklog, outboxBacklogSql } from './outbox-backlog';
import { pausedQueuesSql } from './paused-queues';
import { type RateLimitSpend, rateLimitSpendSql } from './rate-limit-spend';
import { type ReadyQueue, readyQueuesSql } from './ready-queues';
import { type ScheduleLag, scheduleLagFromRow, scheduleLagSql } from './schedule-lag';

/** What the metrics' gauges show, read at one moment. */
export interface MetricsSnapshot {
  readonly taskStates: readonly TaskStateCount[];
  readonly readyQueues: readonly ReadyQueue[];
  readonly leaseHolders: readonly LeaseHolder[];
  readonly outbox: readonly OutboxBacklog[];
  readonly eventWaits: readonly EventWait[];
  readonly scheduleLag: readonly ScheduleLag[];
  /** Registered workers within their age-out (the worker registry). */
  readonly workers: number;
  readonly queueSlots: readonly QueueSlots[];
  /** The names of the paused queues (R53). */
  readonly pausedQueues: readonly string[];
  /** Slots held per concurrency group (R50), groups with a holder only. */
  readonly concurrencySlots: readonly ConcurrencySlots[];
  /** The spend of each rate limit asked about (R51), idle ones too. */
  readonly rateLimits: readonly RateLimitSpend[];
}

/** The rows of one query as a JSON array (one column of the snapshot's single row). */
const rowsOf = (query: RawBuilder<unknown>) =>
  sql`(select coalesce(json_agg(r), '[]'::json) from (${query}) as r)`;

/**
 * Every gauge in one statement: one round trip and one snapshot, so they agree with each
 * other (the ready tasks are among the queued ones). Each query reads live rows through a
 * partial index only (the files beside this one).
 */
export async function metricsSnapshotRead(
  db: Db,
  rateLimits: readonly RateLimit[] = [],
): Promise<MetricsSnapshot> {
  // Column names as the queries give them; the JSON arrays come back as rows of them.
  type Grouped<Labels> = (Labels & { count: number; oldest_seconds: number })[];
  const { rows } = await sql<{
    task_states: Grouped<{ state: TaskStateCount['state']; queue: string }>;
    ready_queues: Grouped<{ queue: string }>;
    lease_holders: Parameters<typeof leaseHolderFromRow>[0][];
    outbox: Grouped<{ channel: string }>;
    event_waits: Grouped<{ event: string }>;
    schedule_lag: Parameters<typeof scheduleLagFromRow>[0][];
    workers: number;
    queue_slots: QueueSlots[];
    paused_queues: { queue: string }[];
    concurrency_slots: ConcurrencySlots[];
    rate_limits: RateLimitSpend[];
  }>`
    select ${rowsOf(taskStateCountsSql)} as task_states,
           ${rowsOf(readyQueuesSql)} as ready_queues,
           ${rowsOf(leaseHoldersSql)} as lease_holders,
           ${rowsOf(outboxBacklogSql)} as outbox,
           ${rowsOf(eventWaitsSql)} as event_waits,
           ${rowsOf(scheduleLagSql)} as schedule_lag,
           (${liveWorkersSql}) as workers,
           ${rowsOf(queueSlotsSql)} as queue_slots,
           ${rowsOf(pausedQueuesSql)} as paused_queues,
           ${rowsOf(concurrencySlotsSql)} as concurrency_slots,
           ${rateLimits.length === 0 ? sql`'[]'::json` : rowsOf(rateLimitSpendSql(rateLimits))}
             as rate_limits`.execute(db);
  const row = rows[0];
  if (row === undefined) throw new Error('the metrics snapshot returned no row');
  return {
    taskStates: row.task_states.map(countedGroupFromRow),
    readyQueues: row.ready_queues.map(countedGroupFromRow),
    leaseHolders: row.lease_holders.map(leaseHolderFromRow),
    outbox: row.outbox.map(countedGroupFromRow),
    eventWaits: row.event_waits.map(countedGroupFromRow),
    scheduleLag: row.schedule_lag.map(scheduleLagFromRow),
    workers: row.workers,
    queueSlots: row.queue_slots,
    pausedQueues: row.paused_queues.map((paused) => paused.queue),
    concurrencySlots: row.concurrency_slots,
    rateLimits: row.rate_limits,
  };
}

export type {
  ConcurrencySlots,
  EventWait,
  LeaseHolder,
  OutboxBacklog,
  QueueSlots,
  RateLimitSpend,
  ReadyQueue,
  ScheduleLag,
  TaskStateCount,
};
