import { sql, type Transaction } from 'kysely';
import { preparedSql } from '../database';
import {
  type LoadedRuns,
  loadedFromRows,
  type TaskWithWorkflowRow,
  taskColumns,
  workflowColumns,
} from '../locked-runs';
import { queueNotPausedSql } from '../queues/queue-pauses';
import type { CausewayDatabase } from '../schema';
import { readyStateSql } from '../task-states';
import { claimAtSql, dueSql } from './claim-order';
import { keyedCandidatesSql, plainCandidateKeyColumns } from './concurrency-claim';
import { definedWorkflowStep } from './defined-workflow-step';
import type { FlowCandidate } from './flow-grant';
import { rateCandidateColumns, rateOpenSql } from './rate-claim';

/**
 * A claim's read, in one round trip (R4, R8): ready rows of one queue in claim order
 * (`run_at − priority`, R49), locked with SKIP LOCKED so two claimers never get the same row
 * (served by the partial index on queued rows), none while the queue is paused (R53); their
 * workflows, locked with SKIP LOCKED so a claimer never
 * waits; and every task of those workflows, locked in id order.
 */
export async function taskClaimLoad(
  tx: Transaction<CausewayDatabase>,
  queue: string,
  limit: number,
  stepKeys: readonly string[],
  flow: {
    /** Some step of the queue has a concurrency key (R50): keyed tasks are candidates too. */
    readonly keyed: boolean;
    /** Some step of the queue spends a rate limit (R51): pass keys with no room. */
    readonly rated: boolean;
  } = { keyed: false, rated: false },
): Promise<
  LoadedRuns & {
    readonly candidateIds: readonly string[];
    /** Candidates a key or a rate limit may hold back, in claim order (`flowGrant`). */
    readonly flowCandidates: readonly FlowCandidate[];
    readonly skipped: number;
  }
> {
  const { keyed, rated } = flow;
  const now = sql`(select now from clock)`;
  const plain = sql`
      select id, workflow_id, ${claimAtSql(sql`t`)} as claim_at, ${rateCandidateColumns(sql`t`)},
        ${plainCandidateKeyColumns}
      from causeway_tasks as t
      where state = ${readyStateSql} and queue = ${queue} and concurrency_key is null
        and ${dueSql(sql`t`, now)}
        and ${definedWorkflowStep(sql`t`, stepKeys)}
        and ${queueNotPausedSql(queue)}${
          rated
            ? sql`
        and ${rateOpenSql(sql`t`, now)}`
            : sql``
        }
      order by ${claimAtSql(sql`t`)}
      limit ${limit}
      for update skip locked`;
  const { rows } = await sql<
    TaskWithWorkflowRow & {
      is_candidate: boolean;
      claim_at: Date | null;
      candidate_count: string;
      concurrency_group: string | null;
      concurrency_key: string | null;
      grant_version: string | null;
      head_version: string | null;
      rate_name: string | null;
      rate_key: string | null;
      rate_cost: number | null;
    }
  >`
    ${preparedSql}
    -- The claim's time, for R4 and the lease: read after the statement's snapshot (see
    -- causeway_clock_now), and rounded up to the millisecond the decision carries it in (a
    -- JavaScript Date), so that it stays later than every edge the snapshot saw.
    with clock as materialized (
      select date_trunc('milliseconds', c.now) + case
          when date_trunc('milliseconds', c.now) < c.now then interval '1 millisecond'
          else interval '0' end as now
      from (select causeway_clock_now() as now) as c
    ),
    candidates as materialized (
      ${
        keyed
          ? sql`select * from (
        select * from (${plain}) as plain
        union all
        select id, workflow_id, claim_at, rate_name, rate_key, rate_cost, concurrency_group,
          concurrency_key, grant_version, head_version
        from (${keyedCandidatesSql({ queue, limit, now, stepKeys, rated })}) as keyed
      ) as merged
      order by claim_at
      limit ${limit}`
          : plain
      }
    ),
    locked as materialized (
      select id from causeway_workflows
      where id = any(array(select workflow_id from candidates))
      order by id
      for update skip locked
    )
    select ${taskColumns}, ${workflowColumns},
      (select now from clock) as db_now,
      c.id is not null as is_candidate, ${claimAtSql(sql`t`)} as claim_at,
      (select count(*) from candidates) as candidate_count, c.concurrency_group,
      c.concurrency_key, c.grant_version, c.head_version, c.rate_name, c.rate_key, c.rate_cost
    from causeway_tasks as t
    join causeway_workflows as w on w.id = t.workflow_id
    left join candidates as c on c.id = t.id
    -- An array, not a semi-join: probes of the (workflow_id, step) index, never a hash of
    -- the whole table whenever it is small enough to look cheap.
    where t.workflow_id = any(array(select id from locked))
    order by t.id
    for update of t, w`.execute(tx);
  // No rows: nothing ready, or every candidate's workflow was busy (rare; polling covers it).
  if (rows.length === 0) {
    return {
      workflows: [],
      tasks: [],
      now: new Date(0),
      candidateIds: [],
      flowCandidates: [],
      skipped: 0,
    };
  }
  const loaded = loadedFromRows(rows, (rows[0] as TaskWithWorkflowRow).db_now);
  // Claims go in claim order, like the candidates were picked.
  const candidates = rows
    .filter((row) => row.is_candidate)
    .sort((a, b) => (a.claim_at?.getTime() ?? 0) - (b.claim_at?.getTime() ?? 0));
  const candidateIds = candidates.map((row) => row.id);
  const skipped =
    Number((rows[0] as { candidate_count: string }).candidate_count) - candidateIds.length;
  const flowCandidates = candidates.flatMap((row): FlowCandidate[] =>
    row.concurrency_key === null && row.rate_name === null
      ? []
      : [
          {
            id: row.id,
            concurrency:
              row.concurrency_key === null
                ? null
                : {
                    group: row.concurrency_group as string,
                    key: row.concurrency_key,
                    grantVersion: row.grant_version as string,
                    headVersion: row.head_version as string,
                  },
            rate:
              row.rate_name === null
                ? null
                : {
                    name: row.rate_name,
                    key: row.rate_key as string,
                    cost: row.rate_cost as number,
                  },
          },
        ],
  );
  return { ...loaded, candidateIds, flowCandidates, skipped };
}

/**
 * The candidate half of a claim alone (the worker uses `taskClaimLoad`): ready rows of one
 * queue in `run_at` order, locked with SKIP LOCKED. Tests use it to hold a barrier between
 * picking and claiming.
 */
export async function taskClaimCandidates(
  tx: Transaction<CausewayDatabase>,
  queue: string,
  limit: number,
): Promise<{ id: string; workflowId: string }[]> {
  const { rows } = await sql<{ id: string; workflow_id: string }>`
    select id, workflow_id from causeway_tasks as t
    where state = ${readyStateSql} and queue = ${queue}
      and ${dueSql(sql`t`, sql`(select causeway_clock_now())`)}
      and ${queueNotPausedSql(queue)}
    order by ${claimAtSql(sql`t`)}
    limit ${limit}
    for update skip locked`.execute(tx);
  return rows.map((row) => ({ id: row.id, workflowId: row.workflow_id }));
}
