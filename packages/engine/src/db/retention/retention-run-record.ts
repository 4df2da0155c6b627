import { sql } from 'kysely';
import type { Db } from '../database';

/** What one retention run did, as stored in causeway_retention_runs. */
export interface RetentionRunRecord {
  readonly operator: string;
  readonly reason: string;
  readonly olderThanMs: number;
  readonly cutoffAt: Date;
  readonly startedAt: Date;
  readonly workflowsRemoved: number;
  readonly tasksRemoved: number;
  readonly logRowsRemoved: number;
  readonly eventsRemoved: number;
  readonly deliveriesRemoved: number;
  /** Versions of the versions listing that no worker served and no kept workflow recorded. */
  readonly versionsRemoved: number;
  readonly partitionsDropped: readonly unknown[];
  readonly partitionsHeld: readonly unknown[];
}

/** Appends the run's record; `finished_at` is database time now. Returns its id. */
export async function retentionRunInsert(db: Db, run: RetentionRunRecord): Promise<string> {
  const { rows } = await sql<{ id: string }>`
    insert into causeway_retention_runs (operator, reason, older_than_ms, cutoff_at, started_at,
      finished_at, workflows_removed, tasks_removed, log_rows_removed, events_removed,
      deliveries_removed, versions_removed, partitions_dropped, partitions_held)
    values (${run.operator}, ${run.reason}, ${run.olderThanMs}, ${run.cutoffAt}, ${run.startedAt},
      causeway_now(), ${run.workflowsRemoved}, ${run.tasksRemoved}, ${run.logRowsRemoved},
      ${run.eventsRemoved}, ${run.deliveriesRemoved}, ${run.versionsRemoved},
      ${JSON.stringify(run.partitionsDropped)}::jsonb, ${JSON.stringify(run.partitionsHeld)}::jsonb)
    returning id::text as id`.execute(db);
  return (rows[0] as { id: string }).id;
}

/** The latest runs, newest first. */
export async function retentionRunList(
  db: Db,
  limit: number,
): Promise<(RetentionRunRecord & { id: string; finishedAt: Date })[]> {
  const { rows } = await sql<{
    id: string;
    operator: string;
    reason: string;
    older_than_ms: string;
    cutoff_at: Date;
    started_at: Date;
    finished_at: Date;
    workflows_removed: string;
    tasks_removed: string;
    log_rows_removed: string;
    events_removed: string;
    deliveries_removed: string;
    versions_removed: string;
    partitions_dropped: unknown[];
    partitions_held: unknown[];
  }>`select * from causeway_retention_runs order by id desc limit ${limit}`.execute(db);
  return rows.map((row) => ({
    id: String(row.id),
    operator: row.operator,
    reason: row.reason,
    olderThanMs: Number(row.older_than_ms),
    cutoffAt: row.cutoff_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    workflowsRemoved: Number(row.workflows_removed),
    tasksRemoved: Number(row.tasks_removed),
    logRowsRemoved: Number(row.log_rows_removed),
    eventsRemoved: Number(row.events_removed),
    deliveriesRemoved: Number(row.deliveries_removed),
    versionsRemoved: Number(row.versions_removed),
    partitionsDropped: row.partitions_dropped,
    partitionsHeld: row.partitions_held,
  }));
}
