import type { Kysely } from 'kysely';
import { databaseNow } from '../../db/clock';
import { eventDeleteBatch } from '../../db/retention/event-delete-batch';
import { partitionDropIfEmpty } from '../../db/retention/partition-drop';
import {
  defaultPartitionCount,
  type PartitionStanding,
  partitionRowCount,
  partitionStandingList,
  rangeTaskCount,
} from '../../db/retention/partition-holders';
import { transitionPartitionsEnsure } from '../../db/retention/partitions-ensure';
import { retentionRunInsert } from '../../db/retention/retention-run-record';
import { unlistedVersionsDelete } from '../../db/retention/version-delete';
import { workflowDeleteBatch } from '../../db/retention/workflow-delete-batch';
import type { CausewayDatabase } from '../../db/schema';
import type { Logger } from '../../logger';
import { partitionDaysAhead } from './partition-upkeep';
import { type PurgeFinishedRequest, validPurgeRequest } from './purge-request';

/** A log partition a run dropped (or, in a dry run, would drop). */
export interface DroppedPartition {
  readonly name: string;
  readonly workflows: number;
  readonly tasks: number;
  readonly logRows: number;
}

/** A partition whose range is old enough but that stays, and what holds it. */
export interface HeldPartition {
  readonly name: string;
  readonly liveWorkflows: number;
  readonly youngWorkflows: number;
  /** Up to five ids of each, lowest first. */
  readonly liveSample: readonly string[];
  readonly youngSample: readonly string[];
  /** `log_busy`: the log's lock was not granted in time; the next run tries again. */
  readonly busy: boolean;
  /** One line: "partition causeway_transitions_20261103 held by 2 live workflows: …". */
  readonly message: string;
}

export interface PurgeFinishedAnswer {
  readonly dryRun: boolean;
  /** Workflows finished before this database time were eligible. */
  readonly cutoffAt: Date;
  readonly workflowsRemoved: number;
  readonly tasksRemoved: number;
  readonly logRowsRemoved: number;
  /**
   * Events no kept workflow needs, and deliveries of removed workflows (docs/retention.md);
   * null for a dry run, which counts only workflows, tasks and log rows.
   */
  readonly eventsRemoved: number | null;
  readonly deliveriesRemoved: number | null;
  /**
   * Rows of the versions listing that no worker serves and no kept workflow records
   * (docs/retention.md); null for a dry run.
   */
  readonly versionsRemoved: number | null;
  readonly partitionsDropped: readonly DroppedPartition[];
  readonly partitionsHeld: readonly HeldPartition[];
  /** Log rows outside every day partition (ids from far-off clocks): kept, never dropped. */
  readonly defaultPartition: { readonly rows: number; readonly workflows: number };
  /** The run's row in causeway_retention_runs; null for a dry run. */
  readonly runId: string | null;
}

const lockTimeoutMs = 500;
const lockAttempts = 3;

/**
 * Removes workflows that can no longer move and finished at least `olderThanMs` ago, a whole
 * log partition at a time (docs/retention.md): a partition goes only when every workflow of its
 * range is eligible; then its workflows are deleted in batches (with tasks, outbox rows and
 * event deliveries) and the partition is dropped, so every workflow that remains keeps its
 * whole log (R25). Then the events no remaining workflow needs go, in batches too (R59), and
 * the versions no worker serves and no remaining workflow records (R54). Any
 * number of runs may overlap: batches skip locked rows and the drop re-checks under the log's
 * lock.
 */
export async function purgeFinished(
  db: Kysely<CausewayDatabase>,
  logger: Logger,
  request: PurgeFinishedRequest,
): Promise<PurgeFinishedAnswer> {
  const valid = validPurgeRequest(request);
  const startedAt = await databaseNow(db);
  const cutoffAt = new Date(startedAt.getTime() - valid.olderThanMs);
  const standings = await partitionStandingList(db, cutoffAt);
  const dropped: DroppedPartition[] = [];
  const removed = { workflows: 0, tasks: 0, events: 0, deliveries: 0, versions: 0 };
  const held: HeldPartition[] = standings.filter(holds).map((standing) => heldBy(standing, false));
  let logBusy = false;
  for (const standing of standings.filter((candidate) => !holds(candidate))) {
    // The lock that one drop did not get, the next would not get either: leave the rest whole
    // (no workflow removed without its log) for the next run.
    if (logBusy) {
      held.push(heldBy(standing, true));
      continue;
    }
    const logRows = await partitionRowCount(db, standing.name);
    if (logRows === null) continue;
    const tasks = await rangeTaskCount(db, standing);
    if (valid.dryRun) {
      dropped.push({ name: standing.name, workflows: standing.eligibleWorkflows, tasks, logRows });
      continue;
    }
    const here = { workflows: 0, tasks: 0 };
    for (;;) {
      const batch = await workflowDeleteBatch(db, standing, cutoffAt, valid.batchSize);
      here.workflows += batch.workflows;
      here.tasks += batch.tasks;
      removed.deliveries += batch.deliveries;
      if (batch.workflows < valid.batchSize) break;
    }
    removed.workflows += here.workflows;
    removed.tasks += here.tasks;
    const outcome = await dropWithRetry(db, standing);
    if (outcome === 'dropped') dropped.push({ name: standing.name, ...here, logRows });
    logBusy = outcome === 'log_busy';
    if (outcome === 'workflows_remain' || outcome === 'log_busy') {
      // Workflows the batches skipped (locked, or revived meanwhile) or a busy log: next run.
      const again = (await partitionStandingList(db, cutoffAt)).find(
        (candidate) => candidate.name === standing.name,
      );
      held.push(heldBy(again ?? standing, outcome === 'log_busy'));
    }
  }
  // After the workflows: the events they alone needed go now.
  if (!valid.dryRun) {
    for (;;) {
      const batch = await eventDeleteBatch(db, cutoffAt, valid.batchSize);
      removed.events += batch.events;
      removed.deliveries += batch.deliveries;
      if (batch.events < valid.batchSize) break;
    }
    // And the versions only those workflows recorded, once no worker serves them.
    removed.versions = (await unlistedVersionsDelete(db)).length;
  }
  // Days ahead are made here too, so a run keeps the partitions coming even with no sweeper.
  // A lock timeout there must not lose the record of what this run removed.
  if (!valid.dryRun) {
    await transitionPartitionsEnsure(db, partitionDaysAhead).catch((error: unknown) =>
      logger.warn({ err: error }, 'making log partitions failed; the sweeper tries again'),
    );
  }
  const answer = {
    dryRun: valid.dryRun,
    cutoffAt,
    workflowsRemoved: valid.dryRun ? sum(dropped, 'workflows') : removed.workflows,
    tasksRemoved: valid.dryRun ? sum(dropped, 'tasks') : removed.tasks,
    logRowsRemoved: sum(dropped, 'logRows'),
    eventsRemoved: valid.dryRun ? null : removed.events,
    deliveriesRemoved: valid.dryRun ? null : removed.deliveries,
    versionsRemoved: valid.dryRun ? null : removed.versions,
    partitionsDropped: dropped,
    partitionsHeld: held,
    defaultPartition: await defaultPartitionCount(db),
  };
  if (valid.dryRun) return { ...answer, runId: null };
  const runId = await retentionRunInsert(db, {
    operator: valid.operator,
    reason: valid.reason,
    olderThanMs: valid.olderThanMs,
    cutoffAt,
    startedAt,
    workflowsRemoved: answer.workflowsRemoved,
    tasksRemoved: answer.tasksRemoved,
    logRowsRemoved: answer.logRowsRemoved,
    eventsRemoved: removed.events,
    deliveriesRemoved: removed.deliveries,
    versionsRemoved: removed.versions,
    partitionsDropped: answer.partitionsDropped,
    partitionsHeld: held,
  });
  logger.info(
    {
      operator: valid.operator,
      reason: valid.reason,
      runId,
      workflowsRemoved: answer.workflowsRemoved,
      eventsRemoved: removed.events,
      deliveriesRemoved: removed.deliveries,
      versionsRemoved: removed.versions,
      partitionsDropped: answer.partitionsDropped.map((partition) => partition.name),
      partitionsHeld: held.map((partition) => partition.message),
    },
    'retention run finished',
  );
  return { ...answer, runId };
}

function holds(standing: PartitionStanding): boolean {
  return standing.liveWorkflows > 0 || standing.youngWorkflows > 0;
}

function heldBy(standing: PartitionStanding, busy: boolean): HeldPartition {
  const reasons = [
    standing.liveWorkflows > 0
      ? `${standing.liveWorkflows} live workflows: ${standing.liveSample.join(', ')}`
      : '',
    standing.youngWorkflows > 0
      ? `${standing.youngWorkflows} workflows finished after the cutoff: ${standing.youngSample.join(', ')}`
      : '',
    busy ? 'the log was busy (its lock was not granted in time; the next run tries again)' : '',
  ].filter((reason) => reason !== '');
  return {
    name: standing.name,
    liveWorkflows: standing.liveWorkflows,
    youngWorkflows: standing.youngWorkflows,
    liveSample: standing.liveSample,
    youngSample: standing.youngSample,
    busy,
    message: `partition ${standing.name} held by ${reasons.join('; ') || 'workflows still being removed'}`,
  };
}

async function dropWithRetry(
  db: Kysely<CausewayDatabase>,
  standing: PartitionStanding,
): Promise<'dropped' | 'workflows_remain' | 'gone' | 'log_busy'> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await db
        .transaction()
        .execute((tx) => partitionDropIfEmpty(tx, standing, lockTimeoutMs));
    } catch (error) {
      const code = (error as { code?: string }).code;
      // 55P03: lock_not_available, the lock timeout.
      if (code !== '55P03') throw error;
      if (attempt >= lockAttempts) return 'log_busy';
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

function sum(rows: readonly DroppedPartition[], key: 'workflows' | 'tasks' | 'logRows'): number {
  return rows.reduce((total, row) => total + row[key], 0);
}
