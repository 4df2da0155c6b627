import { setTimeout as sleep } from 'node:timers/promises';
import type { TaskState } from '@causeway/workflow';
import { specParentState } from '../../helpers/contract-tables';
import { logMismatches, query } from '../../helpers/engine';

/**
 * What the database says after (and during) a database fault: the invariants every
 * scenario checks, read with plain SQL.
 */

/** `read`, tried again while the database is away or our own connection was cut. */
export async function retrying<T>(read: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      return await read();
    } catch (error) {
      if (performance.now() > deadline) throw error;
      await sleep(100);
    }
  }
}

/**
 * Leases that ran out more than `graceMs` ago and are still held (R10: the sweeper moves an
 * expired lease), on the database clock; `overdueMs` is the oldest one's overdue time.
 */
export async function overdueLeases(
  databaseUrl: string,
  graceMs: number,
): Promise<{ count: number; overdueMs: number }> {
  const [row] = await query<{ count: number; overdue_ms: number | null }>(
    databaseUrl,
    `select count(*) filter (where lease_expires_at < causeway_now() - $1 * interval '1 millisecond')::int as count,
            (extract(epoch from max(causeway_now() - lease_expires_at)) * 1000)::int as overdue_ms
       from causeway_tasks
      where state in ('leased', 'cancel_requested')`,
    [graceMs],
  );
  return { count: row?.count ?? 0, overdueMs: Math.max(0, row?.overdue_ms ?? 0) };
}

/** Workflows whose state is not what the aggregation rule makes of their tasks' states. */
export async function aggregationMismatches(
  databaseUrl: string,
): Promise<{ id: string; state: string; expected: string }[]> {
  const rows = await query<{ id: string; state: string; tasks: TaskState[] }>(
    databaseUrl,
    `select w.id, w.state, array_agg(t.state order by t.step) as tasks
       from causeway_workflows w join causeway_tasks t on t.workflow_id = w.id
      group by w.id, w.state`,
  );
  return rows
    .map((row) => ({ id: row.id, state: row.state, expected: specParentState(row.tasks) }))
    .filter((row) => row.state !== row.expected);
}

/** Finished task edges (`succeeded`) so far: grows while work is processed. */
export async function succeededEdges(databaseUrl: string): Promise<number> {
  const [row] = await query<{ n: number }>(
    databaseUrl,
    `select count(*)::int as n from causeway_transitions
      where task_id is not null and to_state = 'succeeded'`,
  );
  return row?.n ?? 0;
}

export interface FinalState {
  /** Workflows by state. */
  readonly workflows: Record<string, number>;
  /** Keys the load had accepted that have no workflow (lost submits). */
  readonly lost: number;
  /** Workflows whose key the load never had accepted (a submit written twice would show here). */
  readonly extra: number;
  readonly r25: readonly Record<string, unknown>[];
  readonly aggregation: readonly { id: string; state: string; expected: string }[];
  /** Task attempts beyond the first (re-runs after a lease lost to the fault). */
  readonly reruns: number;
  /** Task edges by reason, for the report. */
  readonly reasons: Record<string, number>;
}

/** The invariants once the load has drained; `keys`: the idempotency keys it had accepted. */
export async function finalState(
  databaseUrl: string,
  keys: readonly string[],
): Promise<FinalState> {
  const states = await query<{ state: string; n: number }>(
    databaseUrl,
    'select state, count(*)::int as n from causeway_workflows group by state',
  );
  const [found] = await query<{ known: number; total: number }>(
    databaseUrl,
    `select count(*) filter (where idempotency_key = any($1::text[]))::int as known,
            count(*)::int as total
       from causeway_workflows`,
    [keys],
  );
  const [reruns] = await query<{ n: number }>(
    databaseUrl,
    `select coalesce(sum(greatest(attempt - 1, 0)), 0)::int as n from causeway_tasks`,
  );
  const reasons = await query<{ reason: string; n: number }>(
    databaseUrl,
    `select reason, count(*)::int as n from causeway_transitions
      where task_id is not null group by reason`,
  );
  return {
    workflows: Object.fromEntries(states.map((row) => [row.state, row.n])),
    lost: keys.length - (found?.known ?? 0),
    extra: (found?.total ?? 0) - (found?.known ?? 0),
    r25: await logMismatches(databaseUrl),
    aggregation: await aggregationMismatches(databaseUrl),
    reruns: reruns?.n ?? 0,
    reasons: Object.fromEntries(reasons.map((row) => [row.reason, row.n])),
  };
}

/** Workflows not yet finished (nothing of the load may stay behind). */
export async function unfinishedWorkflows(databaseUrl: string): Promise<number> {
  const [row] = await query<{ n: number }>(
    databaseUrl,
    `select count(*)::int as n from causeway_workflows
      where state not in ('succeeded', 'cancelled', 'dead')`,
  );
  return row?.n ?? 0;
}

/**
 * Terminates backends of `databaseName` (pg_terminate_backend, from the admin database):
 * all but the caller's, or only the LISTEN connections. Returns the pids it terminated.
 */
export async function terminateBackends(
  adminUrl: string,
  databaseName: string,
  which: 'all' | 'listen',
): Promise<number[]> {
  // Materialized first: the planner may evaluate a volatile call in a WHERE clause before
  // the other conditions, which would terminate backends of other databases too.
  const rows = await query<{ pid: number }>(
    adminUrl,
    `with targets as materialized (
       select pid from pg_stat_activity
        where datname = $1 and pid <> pg_backend_pid() and backend_type = 'client backend'
          and ($2 = 'all' or query ilike 'listen%'))
     select pid from targets where pg_terminate_backend(pid)`,
    [databaseName, which],
  );
  return rows.map((row) => row.pid);
}

/** The LISTEN backends of `databaseName` now (their pids). */
export async function listenBackends(adminUrl: string, databaseName: string): Promise<number[]> {
  const rows = await query<{ pid: number }>(
    adminUrl,
    `select pid from pg_stat_activity
      where datname = $1 and backend_type = 'client backend' and query ilike 'listen%'`,
    [databaseName],
  );
  return rows.map((row) => row.pid);
}
