import {
  isTerminalWorkflowState,
  nonTerminalTaskStates,
  type Transition,
  type WorkflowState,
} from '@causeway/workflow/internal';
import { type Kysely, type Selectable, sql } from 'kysely';
import {
  type TaskRecord,
  taskFromRow,
  transitionFromRow,
  type WorkflowRecord,
  workflowFromRow,
} from '../rows';
import type { CausewayDatabase, WorkflowTable } from '../schema';

/**
 * Read-only queries for the API and other readers: pages, counts, by-id batches (one query for
 * many ids, so a resolver layer can batch DataLoader-style) and transition log ranges. Nothing
 * here locks or writes. Ids are checked to be UUIDs before they reach SQL, so a malformed id is
 * simply not found instead of a cast error.
 */
type ReadDb = Kysely<CausewayDatabase>;

/** Filters of a workflow listing; absent means "any". */
export interface WorkflowFilterRow {
  readonly states?: readonly string[];
  readonly name?: string;
}

/** A keyset position in (created_at, id) order: created_at exact to the microsecond (UTC ISO). */
export interface WorkflowKey {
  readonly createdAt: string;
  readonly id: string;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Only well-formed UUIDs can name a row; the rest are dropped before SQL. */
export function onlyUuids(ids: readonly string[]): string[] {
  return [...new Set(ids.filter((id) => typeof id === 'string' && uuidPattern.test(id)))];
}

/**
 * The workflows with a task in a live state, one arm per state so each reads that state's
 * partial index. Every workflow that is not terminal has such a task (a parent is terminal
 * once all its children are, docs/state-machine.md), so for a filter of live workflow states
 * these are the only rows to look at, however long the finished history is; the workflows
 * table keeps no state index (updates stay HOT, migration 0007).
 */
const withLiveTask = sql<boolean>`id = any(array(${sql.join(
  nonTerminalTaskStates.map(
    (state) => sql`select workflow_id from causeway_tasks where state = ${sql.lit(state)}`,
  ),
  sql` union all `,
)}))`;

function filtered(db: ReadDb, filter: WorkflowFilterRow) {
  let query = db.selectFrom('causeway_workflows');
  if (filter.states !== undefined) {
    query = query.where('state', 'in', [...filter.states]);
    if (filter.states.every((state) => !isTerminalWorkflowState(state as WorkflowState))) {
      query = query.where(withLiveTask);
    }
  }
  if (filter.name !== undefined) query = query.where('name', '=', filter.name);
  return query;
}

/** The statement of `workflowPageRead` (exported for the tests that explain its plan). */
export function workflowPageQuery(
  db: ReadDb,
  filter: WorkflowFilterRow,
  after: WorkflowKey | null,
  limit: number,
) {
  let query = filtered(db, filter)
    .selectAll()
    .select(
      sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as(
        'created_key',
      ),
    );
  if (after !== null) {
    query = query.where(
      sql<boolean>`(created_at, id) > (${after.createdAt}::timestamptz, ${after.id}::uuid)`,
    );
  }
  return query
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit + 1);
}

/**
 * One page of workflows in (created_at, id) order after `after` (keyset pagination: a row
 * inserted meanwhile never shifts a page, so paging neither skips nor repeats existing rows).
 * Reads `limit + 1` rows to tell whether another page exists.
 */
export async function workflowPageRead(
  db: ReadDb,
  filter: WorkflowFilterRow,
  after: WorkflowKey | null,
  limit: number,
): Promise<{ rows: { workflow: WorkflowRecord; key: WorkflowKey }[]; hasMore: boolean }> {
  if (filter.states !== undefined && filter.states.length === 0)
    return { rows: [], hasMore: false };
  const rows = await workflowPageQuery(db, filter, after, limit).execute();
  return {
    rows: rows.slice(0, limit).map((row) => ({
      workflow: workflowFromRow(row as Selectable<WorkflowTable>),
      key: { createdAt: row.created_key, id: row.id },
    })),
    hasMore: rows.length > limit,
  };
}

/** How many workflows match the filter. */
export async function workflowCountRead(db: ReadDb, filter: WorkflowFilterRow): Promise<number> {
  if (filter.states !== undefined && filter.states.length === 0) return 0;
  const row = await filtered(db, filter)
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Workflows by id, one query for any number of ids. */
export async function workflowListByIds(
  db: ReadDb,
  ids: readonly string[],
): Promise<WorkflowRecord[]> {
  const wanted = onlyUuids(ids);
  if (wanted.length === 0) return [];
  const rows = await db
    .selectFrom('causeway_workflows')
    .selectAll()
    .where(sql<boolean>`id = any(${wanted}::uuid[])`)
    .execute();
  return rows.map(workflowFromRow);
}

/** Tasks by id, one query for any number of ids. */
export async function taskListByIds(db: ReadDb, ids: readonly string[]): Promise<TaskRecord[]> {
  const wanted = onlyUuids(ids);
  if (wanted.length === 0) return [];
  const rows = await db
    .selectFrom('causeway_tasks')
    .selectAll()
    .where(sql<boolean>`id = any(${wanted}::uuid[])`)
    .execute();
  return rows.map(taskFromRow);
}

/** The tasks of many workflows, one query, without locks. */
export async function taskListByWorkflowIds(
  db: ReadDb,
  workflowIds: readonly string[],
): Promise<TaskRecord[]> {
  const wanted = onlyUuids(workflowIds);
  if (wanted.length === 0) return [];
  const rows = await db
    .selectFrom('causeway_tasks')
    .selectAll()
    .where(sql<boolean>`workflow_id = any(${wanted}::uuid[])`)
    .orderBy('workflow_id')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(taskFromRow);
}

/** Every log row (workflow and task rows) of many workflows, in log order per workflow. */
export async function transitionListByWorkflowIds(
  db: ReadDb,
  workflowIds: readonly string[],
): Promise<Transition[]> {
  const wanted = onlyUuids(workflowIds);
  if (wanted.length === 0) return [];
  const rows = await db
    .selectFrom('causeway_transitions')
    .selectAll()
    .where(sql<boolean>`workflow_id = any(${wanted}::uuid[])`)
    .orderBy('workflow_id')
    .orderBy('id')
    .execute();
  return rows.map(transitionFromRow);
}

/** The log rows of many tasks, in log order per task. */
export async function transitionListByTaskIds(
  db: ReadDb,
  taskIds: readonly string[],
): Promise<Transition[]> {
  const wanted = onlyUuids(taskIds);
  if (wanted.length === 0) return [];
  const rows = await db
    .selectFrom('causeway_transitions')
    .selectAll()
    // Through the (workflow_id, id) index: the log has no index of its own on task_id.
    .where(
      sql<boolean>`workflow_id in (select workflow_id from causeway_tasks where id = any(${wanted}::uuid[]))`,
    )
    .where(sql<boolean>`task_id = any(${wanted}::uuid[])`)
    .orderBy('task_id')
    .orderBy('id')
    .execute();
  return rows.map(transitionFromRow);
}

/**
 * Log rows with `after < id <= upTo` in id order (optionally of one workflow), at most `limit`.
 * Callers pass an `upTo` they know to be final (see `transitionLastAllocatedId`).
 */
export async function transitionListRange(
  db: ReadDb,
  range: { after: bigint; upTo: bigint; workflowId?: string; limit: number },
): Promise<Transition[]> {
  if (range.upTo <= range.after) return [];
  let query = db
    .selectFrom('causeway_transitions')
    .selectAll()
    .where(sql<boolean>`id > ${range.after.toString()}::bigint`)
    .where(sql<boolean>`id <= ${range.upTo.toString()}::bigint`);
  if (range.workflowId !== undefined) {
    const [workflowId] = onlyUuids([range.workflowId]);
    if (workflowId === undefined) return [];
    query = query.where('workflow_id', '=', workflowId);
  }
  const rows = await query.orderBy('id').limit(range.limit).execute();
  return rows.map(transitionFromRow);
}

/**
 * One step of the log's finality horizon, in one statement:
 * - `lastId`: the highest transition id handed out so far, committed or not (the identity
 *   sequence's last value; sequences are not transactional), 0 before the first row;
 * - `bound`: only when `lastId > threshold`, a fresh transaction id taken after `lastId` was
 *   read (the CTE is materialized first). Every transaction that already had an xid when
 *   `lastId` was read is below it. (`pg_snapshot_xmax` is no such bound: it is the latest
 *   *completed* xid + 1, and a running transaction can be above it.) Costs one xid.
 * - `xmin`: the statement snapshot's xmin: every transaction below it has finished.
 */
export async function transitionHorizonProbe(
  db: ReadDb,
  threshold: bigint,
): Promise<{ lastId: bigint; bound: bigint | null; xmin: bigint }> {
  const { rows } = await sql<{ last_id: string; bound: string | null; xmin: string }>`
    with allocated as materialized (
      select coalesce(pg_sequence_last_value(
        pg_get_serial_sequence('causeway_transitions', 'id')::regclass), 0) as last_id
    )
    select last_id::text as last_id,
           case when last_id > ${threshold.toString()}::bigint
                then pg_current_xact_id()::text end as bound,
           pg_snapshot_xmin(pg_current_snapshot())::text as xmin
    from allocated`.execute(db);
  const row = rows[0] as { last_id: string; bound: string | null; xmin: string };
  return {
    lastId: BigInt(row.last_id),
    bound: row.bound === null ? null : BigInt(row.bound),
    xmin: BigInt(row.xmin),
  };
}
