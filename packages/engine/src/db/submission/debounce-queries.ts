import { sql, type Transaction } from 'kysely';
import type { LoadedRuns } from '../locked-runs';
import type { CausewayDatabase } from '../schema';
import { lockedRunsRead } from '../settle/workflow-lock';
import { readyStateSql } from '../task-states';

/**
 * Serializes the debounced submits of one (workflow name, key) for the rest of the
 * transaction (R52). An advisory lock, not a row lock: the first submit of a burst finds no row
 * to lock, and two first submits racing must still see each other. Keys whose hashes collide
 * only wait for each other; they never share a burst, which the lookup decides by name and key.
 * Held to the commit, so the next submit of the key sees this one's rows.
 */
export async function debounceLockKey(
  tx: Transaction<CausewayDatabase>,
  name: string,
  key: string,
): Promise<void> {
  // The one-bigint key space, apart from the two-int keys of the other admission locks; the
  // name's length first, so that no other (name, key) spells the same text.
  await sql`select pg_advisory_xact_lock(hashtextextended(
      'causeway_debounce:' || length(${name}) || ':' || ${name} || ${key}, 0))`.execute(tx);
}

/**
 * The queued workflows of a debounce key but `except`, locked with all their tasks (in the
 * order of every full decision's lock), with the start of their bursts. A claim locks the
 * task and its workflow with SKIP LOCKED: once these rows are locked no claim takes their
 * tasks, and a claim that locked them first has committed (its workflow is no longer queued)
 * or still holds them, and this waits for it.
 */
export async function debounceQueuedLock(
  tx: Transaction<CausewayDatabase>,
  name: string,
  key: string,
  except: string,
): Promise<{ readonly runs: LoadedRuns; readonly burstStartedAt: ReadonlyMap<string, Date> }> {
  const runs = await lockedRunsRead(
    tx,
    sql`select id from causeway_workflows
      -- A workflow none of whose tasks started is queued, named as its ready tasks' state.
      where name = ${name} and debounce_key = ${key} and state = ${readyStateSql} and id <> ${except}
      order by id
      for update`,
  );
  const ids = runs.workflows.map((workflow) => workflow.id);
  const burstStartedAt = new Map<string, Date>();
  if (ids.length > 0) {
    const { rows } = await sql<{ id: string; burst_started_at: Date | null }>`
      select id, debounce_burst_started_at as burst_started_at from causeway_workflows
      where id = any(${ids}::uuid[])`.execute(tx);
    for (const row of rows) {
      if (row.burst_started_at !== null) {
        burstStartedAt.set(row.id, row.burst_started_at);
      }
    }
  }
  return { runs, burstStartedAt };
}

export interface DebounceMark {
  readonly workflowId: string;
  readonly key: string;
  readonly quietMs: number;
  readonly maxWaitMs: number | null;
  /** The burst's first submit, from the workflow superseded; null starts a new burst now. */
  readonly burstStartedAt: Date | null;
}

/**
 * Records the key, the burst's start and the definition's times on the surviving workflow,
 * and puts its queued tasks off until it is due: `quietMs` from now, but no later than
 * `maxWaitMs` after the burst's start (never before now). A step's own delay stays on top.
 * Answers when it is due, by database time.
 */
export async function debounceMark(
  tx: Transaction<CausewayDatabase>,
  mark: DebounceMark,
): Promise<Date> {
  const { rows } = await sql<{ due_at: Date }>`
    with clock as materialized (select causeway_now() as now),
    marked as (
      update causeway_workflows
      set debounce_key = ${mark.key}, debounce_quiet_ms = ${mark.quietMs},
        debounce_max_wait_ms = ${mark.maxWaitMs},
        debounce_burst_started_at = coalesce(${mark.burstStartedAt}::timestamptz,
          (select now from clock))
      where id = ${mark.workflowId}
      returning debounce_burst_started_at as burst_started_at
    ),
    due as materialized (
      select greatest(c.now, least(c.now + ${mark.quietMs} * interval '1 millisecond',
          m.burst_started_at + ${mark.maxWaitMs}::int * interval '1 millisecond')) as due_at,
        c.now
      from marked as m cross join clock as c
    ),
    shifted as (
      update causeway_tasks as t set run_at = t.run_at + (d.due_at - d.now)
      from due as d
      where t.workflow_id = ${mark.workflowId} and t.state = ${readyStateSql} and t.run_at is not null
      returning t.id
    )
    select d.due_at, (select count(*) from shifted) as shifted from due as d`.execute(tx);
  const row = rows[0];
  if (row === undefined)
    throw new Error(`workflow ${mark.workflowId} vanished before its debounce`);
  return row.due_at;
}
