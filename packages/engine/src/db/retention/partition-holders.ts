import { sql } from 'kysely';
import type { Db } from '../database';
import { workflowStillMovesSql } from './workflow-states';

/** One partition of the transition log and what its workflows are, as a retention run sees them. */
export interface PartitionStanding {
  readonly name: string;
  /** Null: MINVALUE (the first partition, made of the log as it was before partitioning). */
  readonly lowerId: string | null;
  readonly upperId: string;
  /** Workflows in the range that can no longer move, finished before the cutoff. */
  readonly eligibleWorkflows: number;
  /** Workflows that can still move (workflow-states.ts): they hold the partition. */
  readonly liveWorkflows: number;
  /** Terminal workflows finished after the cutoff: they hold it too. */
  readonly youngWorkflows: number;
  /** Up to five ids of each holding kind, lowest first. */
  readonly liveSample: readonly string[];
  readonly youngSample: readonly string[];
}

/**
 * The day partitions (and the first one) whose whole id range was created before the cutoff,
 * with their workflows counted by standing. Each count is one range scan of the workflows'
 * primary key: a partition's workflows are exactly the ids in its range.
 */
export async function partitionStandingList(db: Db, cutoff: Date): Promise<PartitionStanding[]> {
  const { rows } = await sql<{
    name: string;
    lower_id: string | null;
    upper_id: string;
    eligible: string;
    live: string;
    young: string;
    live_sample: string[] | null;
    young_sample: string[] | null;
  }>`
    select p.name, p.lower_id::text as lower_id, p.upper_id::text as upper_id,
           s.eligible, s.live, s.young, s.live_sample::text[] as live_sample,
           s.young_sample::text[] as young_sample
      from causeway_transition_partitions as p
      cross join lateral (
        select count(*) filter (where standing = 'eligible') as eligible,
               count(*) filter (where standing = 'live') as live,
               count(*) filter (where standing = 'young') as young,
               (array_agg(id order by id) filter (where standing = 'live'))[1:5] as live_sample,
               (array_agg(id order by id) filter (where standing = 'young'))[1:5] as young_sample
          from (
            select w.id,
                   case when ${workflowStillMovesSql()} then 'live'
                        when w.updated_at >= ${cutoff} then 'young'
                        else 'eligible' end as standing
              from causeway_workflows as w
             where (p.lower_id is null or w.id >= p.lower_id) and w.id < p.upper_id
          ) as standings
      ) as s
     where not p.is_default and p.upper_id <= causeway_uuid_floor(${cutoff})
     order by p.upper_id`.execute(db);
  return rows.map((row) => ({
    name: row.name,
    lowerId: row.lower_id,
    upperId: row.upper_id,
    eligibleWorkflows: Number(row.eligible),
    liveWorkflows: Number(row.live),
    youngWorkflows: Number(row.young),
    liveSample: row.live_sample ?? [],
    youngSample: row.young_sample ?? [],
  }));
}

/** Rows in the default partition (ids outside every day made), and their workflows. */
export async function defaultPartitionCount(db: Db): Promise<{ rows: number; workflows: number }> {
  const { rows } = await sql<{ rows: string; workflows: string }>`
    select count(*) as rows, count(distinct workflow_id) as workflows
      from causeway_transitions_default`.execute(db);
  const row = rows[0] as { rows: string; workflows: string };
  return { rows: Number(row.rows), workflows: Number(row.workflows) };
}

/**
 * Log rows of one partition (counted before it is dropped, for the run's record); null when it
 * is gone already (another run dropped it since it was listed).
 */
export async function partitionRowCount(db: Db, name: string): Promise<number | null> {
  try {
    const { rows } = await sql<{ n: string }>`select count(*) as n from ${sql.table(name)}`.execute(
      db,
    );
    return Number((rows[0] as { n: string }).n);
  } catch (error) {
    // 42P01: undefined_table.
    if ((error as { code?: unknown }).code === '42P01') return null;
    throw error;
  }
}

/** Tasks of the workflows in one partition's id range (what a dry run would remove). */
export async function rangeTaskCount(
  db: Db,
  range: { readonly lowerId: string | null; readonly upperId: string },
): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from causeway_tasks as t
     where (${range.lowerId}::uuid is null or t.workflow_id >= ${range.lowerId}::uuid)
       and t.workflow_id < ${range.upperId}::uuid`.execute(db);
  return Number((rows[0] as { n: string }).n);
}
