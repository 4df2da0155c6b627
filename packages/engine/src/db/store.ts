import { type Kysely, type RawBuilder, type Selectable, sql, type Transaction } from 'kysely';
import { type ArrayElement, arrayLiteral, constantArrayLiteral } from './array-literal';
import { transitionsChannel, wakeupChannel } from './channels';
import { executeDirect } from './direct';
import { type DistinctRows, distinctRows } from './distinct-rows';
import { preparedMarker } from './prepared-statements';
import {
  type LeasedTask,
  leasedTaskFromRow,
  type TaskRecord,
  taskFromRow,
  transitionFromRow,
  type WorkflowRecord,
  workflowFromRow,
} from './rows';
import type { CausewayDatabase, TaskTable } from './schema';

/**
 * The engine's store: every SQL statement Causeway runs lives in this folder. Functions that
 * lock rows take a Transaction. Names are noun-first (River's driver interface).
 */
export type Db = Kysely<CausewayDatabase> | Transaction<CausewayDatabase>;

/** Marks a hot statement with a fixed text as a named prepared statement (see prepared-statements.ts). */
const preparedSql = sql.raw(preparedMarker);

/** A claim's fence (R7): every write of that claim is conditional on it. */
export interface LeaseFence {
  readonly taskId: string;
  readonly holder: string;
  readonly epoch: number;
}

export interface NewWorkflowRow {
  readonly id: string;
  readonly name: string;
  readonly state: string;
  readonly inputJson: string;
  readonly idempotencyKey: string | null;
  /** The definition's step names, comma-separated (`workflowStepsText`). */
  readonly steps: string;
}

export interface NewTransitionRow {
  readonly workflowId: string;
  readonly taskId: string | null;
  readonly step: string | null;
  readonly from: string | null;
  readonly to: string;
  readonly reason: string;
  readonly errorCategory: string | null;
  readonly errorSummary: string | null;
  readonly actor: string;
  readonly attempt: number;
  readonly detail: Readonly<Record<string, unknown>> | null;
}

/** The full new value of a task row after an edge, written only if the row is still as read. */
export interface TaskWrite {
  readonly id: string;
  readonly expectedState: string;
  readonly expectedEpoch: number;
  readonly state: string;
  readonly attempt: number;
  readonly replayCount: number;
  readonly effectStarted: boolean;
  readonly runAt: Date | null;
  readonly deadlineAt: Date | null;
  readonly leaseHolder: string | null;
  readonly leaseEpoch: number;
  readonly leaseExpiresAt: Date | null;
  readonly outputJson: string | null;
  readonly receiptId: string | null;
  readonly receiptDeadlineAt: Date | null;
  readonly lastErrorCategory: string | null;
  readonly lastError: string | null;
}

/** Database time (R11): `now()` plus the test-only offset. */
export async function databaseNow(db: Db): Promise<Date> {
  const { rows } = await sql<{ now: Date }>`select causeway_now() as now`.execute(db);
  return (rows[0] as { now: Date }).now;
}

/** Moves database time for tests (R11); 0 in production. */
export async function clockSetOffset(db: Db, offsetMs: number): Promise<void> {
  await db.updateTable('causeway_clock').set({ offset_ms: offsetMs }).execute();
}

/**
 * The insert of log rows (R24) in their order, as one fragment of a larger statement; `at`
 * is the database time to stamp, `filter` an optional condition on the row (`v.`).
 */
function logRowsInsert(
  log: readonly NewTransitionRow[],
  at: RawBuilder<unknown>,
  filter: RawBuilder<unknown>,
) {
  const column = (pick: (row: NewTransitionRow) => string | number | null) =>
    arrayLiteral(log.map(pick));
  return sql`insert into causeway_transitions (workflow_id, task_id, step, from_state, to_state,
      reason, error_category, error_summary, actor, attempt, at, detail)
    select workflow_id, task_id, step, from_state, to_state, reason, error_category,
      error_summary, actor, attempt, ${at}, detail::jsonb
    from unnest(
      ${column((row) => row.workflowId)}::uuid[],
      ${column((row) => row.taskId)}::uuid[],
      ${column((row) => row.step)}::text[],
      ${column((row) => row.from)}::text[],
      ${column((row) => row.to)}::text[],
      ${column((row) => row.reason)}::text[],
      ${column((row) => row.errorCategory)}::text[],
      ${column((row) => row.errorSummary)}::text[],
      ${column((row) => row.actor)}::text[],
      ${column((row) => row.attempt)}::integer[],
      ${column((row) => (row.detail === null ? null : JSON.stringify(row.detail)))}::text[]
    ) with ordinality as v(workflow_id, task_id, step, from_state, to_state, reason,
      error_category, error_summary, actor, attempt, detail, position)
    ${filter}
    order by position`;
}

/** A task of a new workflow; times are offsets from the database's now at insert. */
export interface NewSubmittedTask {
  readonly id: string;
  readonly workflowId: string;
  readonly step: string;
  readonly queue: string;
  readonly state: string;
  readonly maxAttempts: number;
  /** Queued roots run now; pending tasks have no run_at yet. */
  readonly runNow: boolean;
  /** Absolute deadline as an offset from acceptance, or null (R28, R29). */
  readonly deadlineInMs: number | null;
}

/** Log details are small JSON objects (or null); equal when their JSON text is. */
const sameDetail = (a: NewTransitionRow['detail'], b: NewTransitionRow['detail']) =>
  a === b || (a !== null && b !== null && JSON.stringify(a) === JSON.stringify(b));

/**
 * Admits workflows in ONE statement (so, outside a transaction, one round trip): the
 * workflows (a row whose (name, key) exists is skipped, R2), the tasks and the `submitted`
 * transitions of those inserted, the workers' wake-up and the transition announcement.
 * Rows refer to their workflow and task by position, and repeated values (a step's task
 * columns, an edge's log columns) are sent once (`distinctRows`), both read back by array
 * subscripts: a uuid costs PostgreSQL about half a microsecond to parse, and a batch of a
 * thousand one-step workflows otherwise sends six thousand of them. Returns the ids of the
 * workflows it did not insert (their key existed).
 */
export async function submissionInsert(db: Db, rows: SubmissionRows): Promise<Set<string>> {
  const { workflows, tasks, transitions: log } = rows;
  const wakeQueues = [...new Set(tasks.filter((task) => task.runNow).map((task) => task.queue))];
  const workflowPosition = new Map(workflows.map((row, index) => [row.id, index + 1]));
  const taskPosition = new Map(tasks.map((task, index) => [task.id, index + 1]));
  const positionOf = (positions: Map<string, number>, id: string) => {
    const position = positions.get(id);
    if (position === undefined) throw new Error(`submission row refers to unknown id ${id}`);
    return position;
  };
  const workflowKinds = distinctRows(
    workflows,
    (a, b) => a.name === b.name && a.state === b.state && a.steps === b.steps,
  );
  const taskKinds = distinctRows(
    tasks,
    (a, b) =>
      a.step === b.step &&
      a.queue === b.queue &&
      a.state === b.state &&
      a.maxAttempts === b.maxAttempts &&
      a.runNow === b.runNow &&
      a.deadlineInMs === b.deadlineInMs,
  );
  const edges = distinctRows(
    log,
    (a, b) =>
      a.step === b.step &&
      a.from === b.from &&
      a.to === b.to &&
      a.reason === b.reason &&
      a.errorCategory === b.errorCategory &&
      a.errorSummary === b.errorSummary &&
      a.actor === b.actor &&
      a.attempt === b.attempt &&
      sameDetail(a.detail, b.detail),
  );
  const column = <Row>(kinds: DistinctRows<Row>, pick: (row: Row) => ArrayElement) =>
    arrayLiteral(kinds.values.map(pick));
  const { rows: answer } = await executeDirect(
    db,
    sql<{ skipped: string[] | null }>`
    ${preparedSql}
    with clock as materialized (
      -- Database time once per statement: causeway_now() per row costs microseconds each.
      select causeway_now() as at
    ),
    id as materialized (
      select ${arrayLiteral(workflows.map((row) => row.id))}::uuid[] as workflow,
        ${arrayLiteral(tasks.map((task) => task.id))}::uuid[] as task
    ),
    workflow_insert as (
      insert into causeway_workflows (id, name, state, input, idempotency_key, steps, created_at,
        updated_at)
      select (select workflow from id)[v.position],
        (${column(workflowKinds, (row) => row.name)}::text[])[v.kind],
        (${column(workflowKinds, (row) => row.state)}::text[])[v.kind],
        (${`[${workflows.map((row) => row.inputJson).join(',')}]`}::jsonb)->(v.position::integer - 1),
        v.idempotency_key,
        (${column(workflowKinds, (row) => row.steps)}::text[])[v.kind],
        (select at from clock), (select at from clock)
      -- The inputs travel as one JSON array (their texts joined), read back by position:
      -- as a text array each needed its quotes escaped.
      from unnest(
        ${arrayLiteral(workflowKinds.positions)}::integer[],
        ${arrayLiteral(workflows.map((row) => row.idempotencyKey))}::text[]
      ) with ordinality as v(kind, idempotency_key, position)
      order by v.position
      on conflict (name, idempotency_key) where idempotency_key is not null do nothing
      returning id
    ),
    task_insert as (
      insert into causeway_tasks (id, workflow_id, step, queue, state, max_attempts, run_at,
        deadline_at, created_at, updated_at)
      select t.id, t.workflow_id, t.step, t.queue, t.state, t.max_attempts,
        case when t.run_now then (select at from clock) end,
        (select at from clock) + t.deadline_ms * interval '1 millisecond',
        (select at from clock), (select at from clock)
      from (
        select (select task from id)[v.position] as id,
          (select workflow from id)[v.workflow] as workflow_id, v.position,
          (${column(taskKinds, (task) => task.step)}::text[])[v.kind] as step,
          (${column(taskKinds, (task) => task.queue)}::text[])[v.kind] as queue,
          (${column(taskKinds, (task) => task.state)}::text[])[v.kind] as state,
          (${column(taskKinds, (task) => task.maxAttempts)}::integer[])[v.kind] as max_attempts,
          (${column(taskKinds, (task) => task.runNow)}::boolean[])[v.kind] as run_now,
          (${column(taskKinds, (task) => task.deadlineInMs)}::bigint[])[v.kind] as deadline_ms
        from unnest(
          ${arrayLiteral(tasks.map((task) => positionOf(workflowPosition, task.workflowId)))}::integer[],
          ${arrayLiteral(taskKinds.positions)}::integer[]
        ) with ordinality as v(workflow, kind, position)
      ) as t
      where t.workflow_id in (select id from workflow_insert)
      returning 1
    ),
    log_insert as (
      insert into causeway_transitions (workflow_id, task_id, step, from_state, to_state,
        reason, error_category, error_summary, actor, attempt, at, detail)
      select l.workflow_id, l.task_id, l.step, l.from_state, l.to_state, l.reason,
        l.error_category, l.error_summary, l.actor, l.attempt, (select at from clock),
        l.detail::jsonb
      from (
        select (select workflow from id)[v.workflow] as workflow_id,
          (select task from id)[v.task] as task_id, v.position,
          (${column(edges, (row) => row.step)}::text[])[v.edge] as step,
          (${column(edges, (row) => row.from)}::text[])[v.edge] as from_state,
          (${column(edges, (row) => row.to)}::text[])[v.edge] as to_state,
          (${column(edges, (row) => row.reason)}::text[])[v.edge] as reason,
          (${column(edges, (row) => row.errorCategory)}::text[])[v.edge] as error_category,
          (${column(edges, (row) => row.errorSummary)}::text[])[v.edge] as error_summary,
          (${column(edges, (row) => row.actor)}::text[])[v.edge] as actor,
          (${column(edges, (row) => row.attempt)}::integer[])[v.edge] as attempt,
          (${column(edges, (row) => (row.detail === null ? null : JSON.stringify(row.detail)))}::text[])[v.edge]
            as detail
        from unnest(
          ${arrayLiteral(log.map((row) => positionOf(workflowPosition, row.workflowId)))}::integer[],
          ${arrayLiteral(log.map((row) => (row.taskId === null ? null : positionOf(taskPosition, row.taskId))))}::integer[],
          ${arrayLiteral(edges.positions)}::integer[]
        ) with ordinality as v(workflow, task, edge, position)
      ) as l
      where l.workflow_id in (select id from workflow_insert)
      order by l.position
      returning 1
    ),
    wake as (
      select pg_notify(${wakeupChannel}, queue) from unnest(${wakeQueues}::text[]) as queue
      where exists (select 1 from workflow_insert)
    ),
    announce as (
      select pg_notify(${transitionsChannel}, '') where exists (select 1 from workflow_insert)
    )
    -- One row: the ids of workflows not inserted, only when there are any (pg parses every
    -- row it is sent). The counts make the SELECT CTEs (the wake-ups) run.
    select case when inserted.count < ${workflows.length}::integer then array(
        select unnest(workflow) from id except select id from workflow_insert) end as skipped,
      (select count(*) from task_insert) as tasks, (select count(*) from log_insert) as log,
      (select count(*) from wake) as wake, (select count(*) from announce) as announce
    from (select count(*) from workflow_insert) as inserted`,
  );
  return new Set(answer[0]?.skipped ?? []);
}

/** The rows of a submission (`submissionInsert`). */
export interface SubmissionRows {
  readonly workflows: readonly NewWorkflowRow[];
  readonly tasks: readonly NewSubmittedTask[];
  readonly transitions: readonly NewTransitionRow[];
}

/** Existing workflows by (name, idempotency key), for deduplicated submits (R2). */
export async function workflowFindByKey(
  db: Db,
  name: string,
  idempotencyKey: string,
): Promise<WorkflowRecord | undefined> {
  const row = await db
    .selectFrom('causeway_workflows')
    .selectAll()
    .where('name', '=', name)
    .where('idempotency_key', '=', idempotencyKey)
    .executeTakeFirst();
  return row === undefined ? undefined : workflowFromRow(row);
}

/** Which workflow each task belongs to (immutable, so no lock is needed). */
export async function taskWorkflowIds(
  db: Db,
  taskIds: readonly string[],
): Promise<Map<string, string>> {
  if (taskIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('causeway_tasks')
    .select(['id', 'workflow_id'])
    .where('id', 'in', [...taskIds])
    .execute();
  return new Map(rows.map((row) => [row.id, row.workflow_id]));
}

/** All tasks of these workflows, unlocked (reads; deciders use `workflowLockWithTasks`). */
export async function taskListByWorkflows(
  db: Db,
  workflowIds: readonly string[],
): Promise<TaskRecord[]> {
  if (workflowIds.length === 0) return [];
  const rows = await db
    .selectFrom('causeway_tasks')
    .selectAll()
    .where('workflow_id', 'in', [...workflowIds])
    .orderBy('id')
    .execute();
  return rows.map(taskFromRow);
}

/** Locked workflows with all their (locked) tasks, and the database time of the lock. */
export interface LoadedRuns {
  readonly workflows: readonly WorkflowRecord[];
  readonly tasks: readonly TaskRecord[];
  readonly now: Date;
}

type TaskWithWorkflowRow = Selectable<TaskTable> & {
  readonly w_name: string;
  readonly w_state: string;
  readonly w_input: unknown;
  readonly w_idempotency_key: string | null;
  readonly w_created_at: Date;
  readonly w_updated_at: Date;
  readonly db_now: Date;
};

/** Splits joined task + workflow rows into records (workflows de-duplicated, in row order). */
function loadedFromRows(rows: readonly TaskWithWorkflowRow[], now: Date): LoadedRuns {
  const workflows = new Map<string, WorkflowRecord>();
  for (const row of rows) {
    if (workflows.has(row.workflow_id)) continue;
    workflows.set(
      row.workflow_id,
      workflowFromRow({
        id: row.workflow_id,
        name: row.w_name,
        state: row.w_state,
        input: row.w_input,
        idempotency_key: row.w_idempotency_key,
        created_at: row.w_created_at,
        updated_at: row.w_updated_at,
      }),
    );
  }
  return { workflows: [...workflows.values()], tasks: rows.map(taskFromRow), now };
}

/**
 * Task columns by name: a prepared statement with `t.*` would fail ("cached plan must not
 * change result type") on connections that prepared it before a migration added a column.
 */
const taskColumns = sql`t.id, t.workflow_id, t.step, t.queue, t.state, t.attempt, t.max_attempts,
  t.replay_count, t.run_at, t.deadline_at, t.lease_holder, t.lease_epoch, t.lease_expires_at,
  t.effect_started, t.evidence, t.checkpoints, t.progress, t.output, t.receipt_id,
  t.receipt_deadline_at, t.last_error_category, t.last_error, t.cancel_asked_at,
  t.cancel_asked_by, t.created_at, t.updated_at`;

/** The task columns an attempt reads (`LeasedTask`). */
const leasedTaskColumns = sql`t.id, t.workflow_id, t.step, t.queue, t.state, t.attempt,
  t.lease_epoch, t.deadline_at, t.evidence, t.checkpoints`;
type LeasedTaskRow = Parameters<typeof leasedTaskFromRow>[0];

const workflowColumns = sql`w.name as w_name, w.state as w_state, w.input as w_input,
  w.idempotency_key as w_idempotency_key, w.created_at as w_created_at,
  w.updated_at as w_updated_at`;

/**
 * Locks workflows in id order (one lock order everywhere, so deciders never deadlock),
 * then all their task rows in id order, and reads database time: one round trip. The main
 * query locks `w` again (already ours): only a locked row is re-read at its latest version;
 * a plain join would return the statement snapshot's, stale if a writer we waited for
 * committed meanwhile.
 * With `skipLocked` a claimer never waits: a workflow another transaction holds is left
 * for the next claim. Task rows are locked too, so a fenced write (boundary, checkpoint)
 * or a renewal racing the decision waits and then sees it instead of being overwritten.
 */
export async function workflowLockWithTasks(
  tx: Transaction<CausewayDatabase>,
  workflowIds: readonly string[],
  options: { skipLocked: boolean },
): Promise<LoadedRuns> {
  if (workflowIds.length === 0) return { workflows: [], tasks: [], now: await databaseNow(tx) };
  const { rows } = await sql<TaskWithWorkflowRow>`
    ${preparedSql}
    with locked as materialized (
      select id from causeway_workflows
      where id = any(${[...workflowIds]}::uuid[])
      order by id
      for update ${options.skipLocked ? sql`skip locked` : sql``}
    )
    select ${taskColumns}, ${workflowColumns}, (select causeway_now()) as db_now
    from causeway_tasks as t
    join causeway_workflows as w on w.id = t.workflow_id
    -- An array, not a semi-join: probes of the (workflow_id, step) index, never a hash of
    -- the whole table whenever it is small enough to look cheap.
    where t.workflow_id = any(array(select id from locked))
    order by t.id
    for update of t, w`.execute(tx);
  return loadedFromRows(rows, rows[0]?.db_now ?? (await databaseNow(tx)));
}

/**
 * A ready task is one this engine can run and settle: its step, and every step of its
 * workflow (`steps`, written at submit), are steps this engine defines (`stepKeys`,
 * `workflow/step`). In a rolling deploy, another version's workflows, and workflows a newer
 * version gave steps this one does not know, wait for a worker that knows them, instead of
 * filling every claim of this one while its own tasks wait behind them, or having a step
 * completed by a worker that could not promote the new steps waiting for it. Read through the
 * workflow's primary key, once per ready row the claim reads; a workflow row without `steps`
 * (not written by a submit) is judged by the task's step alone (a submitted workflow's steps
 * include its tasks' own).
 */
function definedWorkflowStep(task: RawBuilder<unknown>, stepKeys: readonly string[]) {
  const keys = sql`${constantArrayLiteral(stepKeys)}::text[]`;
  return sql`coalesce((
      select not exists (
          select 1
          from unnest(coalesce(string_to_array(w.steps, ','), array[${task}.step])) as known(step)
          where w.name || '/' || known.step <> all(${keys}))
      from causeway_workflows as w where w.id = ${task}.workflow_id), false)`;
}

/**
 * A claim's read, in one round trip (R4, R8): ready rows of one queue in `run_at` order,
 * locked with SKIP LOCKED so two claimers never get the same row (served by the partial
 * index on queued rows); their workflows, locked with SKIP LOCKED so a claimer never
 * waits; and every task of those workflows, locked in id order.
 */
export async function taskClaimLoad(
  tx: Transaction<CausewayDatabase>,
  queue: string,
  limit: number,
  stepKeys: readonly string[],
): Promise<LoadedRuns & { readonly candidateIds: readonly string[]; readonly skipped: number }> {
  const { rows } = await sql<
    TaskWithWorkflowRow & { is_candidate: boolean; candidate_count: string }
  >`
    ${preparedSql}
    with candidates as materialized (
      select id, workflow_id from causeway_tasks as t
      where state = 'queued' and queue = ${queue} and run_at <= (select causeway_statement_now())
        and ${definedWorkflowStep(sql`t`, stepKeys)}
      order by run_at
      limit ${limit}
      for update skip locked
    ),
    locked as materialized (
      select id from causeway_workflows
      where id = any(array(select workflow_id from candidates))
      order by id
      for update skip locked
    )
    select ${taskColumns}, ${workflowColumns},
      -- The claim's time is its statement's (see causeway_statement_now), for R4 and the lease.
      (select causeway_statement_now()) as db_now,
      t.id in (select id from candidates) as is_candidate,
      (select count(*) from candidates) as candidate_count
    from causeway_tasks as t
    join causeway_workflows as w on w.id = t.workflow_id
    -- An array, not a semi-join: probes of the (workflow_id, step) index, never a hash of
    -- the whole table whenever it is small enough to look cheap.
    where t.workflow_id = any(array(select id from locked))
    order by t.id
    for update of t, w`.execute(tx);
  // No rows: nothing ready, or every candidate's workflow was busy (rare; polling covers it).
  if (rows.length === 0) {
    return { workflows: [], tasks: [], now: new Date(0), candidateIds: [], skipped: 0 };
  }
  const loaded = loadedFromRows(rows, (rows[0] as TaskWithWorkflowRow).db_now);
  // Claims go in run_at order, like the candidates were picked.
  const candidateIds = rows
    .filter((row) => row.is_candidate)
    .sort((a, b) => (a.run_at?.getTime() ?? 0) - (b.run_at?.getTime() ?? 0))
    .map((row) => row.id);
  const skipped =
    Number((rows[0] as { candidate_count: string }).candidate_count) - candidateIds.length;
  return { ...loaded, candidateIds, skipped };
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
    select id, workflow_id from causeway_tasks
    where state = 'queued' and queue = ${queue} and run_at <= (select causeway_statement_now())
    order by run_at
    limit ${limit}
    for update skip locked`.execute(tx);
  return rows.map((row) => ({ id: row.id, workflowId: row.workflow_id }));
}

/**
 * What a one-statement claim may do, read off the pure machine (`deriveClaimOutcomes`) and
 * the engine's definitions: the edge's target, reason and actor, how the attempt and the
 * effect marker change, the parent's state after a claim by its state before, and the steps
 * this engine defines (with whether each needs its upstream steps' outputs).
 */
export interface FastClaimPlan {
  readonly queue: string;
  readonly limit: number;
  readonly holder: string;
  readonly actor: string;
  readonly leaseMs: number;
  readonly to: string;
  readonly reason: string;
  readonly attemptIncrement: number;
  readonly effectStarted: boolean;
  readonly parentFrom: readonly string[];
  readonly parentTo: readonly string[];
  readonly definedNames: readonly string[];
  readonly stepNames: readonly string[];
  readonly stepSteps: readonly string[];
  /** `workflow/step` of every step this engine defines (`definedWorkflowStep`). */
  readonly stepKeys: readonly string[];
  /** Per step: a JSON array of the steps it runs after, directly or not (whose outputs it reads). */
  readonly stepUpstream: readonly string[];
}

/** A task a one-statement claim leased, with what its attempt needs to start. */
export interface FastClaimedTask {
  readonly task: LeasedTask;
  readonly workflowName: string;
  readonly input: unknown;
  /** Outputs of the step's upstream steps by step name. */
  readonly outputs: Readonly<Record<string, unknown>>;
}

export interface FastClaimResult {
  /**
   * False when some ready task is one the statement may not decide (its deadline passed, its
   * parent's state is not in the plan, its step is unknown): nothing was written, and the
   * caller decides in full.
   */
  readonly decided: boolean;
  readonly claimed: readonly FastClaimedTask[];
  /** Candidates left because another transaction held their workflow. */
  readonly skipped: number;
  readonly now: Date;
}

/**
 * A claim in one statement (R4, R8), for the common case: the same candidates as
 * `taskClaimLoad` (ready rows in `run_at` order, SKIP LOCKED, their workflows SKIP LOCKED),
 * then, if every one is covered by the plan, the claim edges, the parents' new states and the
 * log rows in the order the full decision writes them (each task's edge, then its parent's
 * edge if the parent changed). Candidates are tasks of workflows whose every step this
 * engine defines (`definedWorkflowStep`); a workflow it does not define is still left alone,
 * as in the full decision. If any candidate is not covered, nothing is written.
 */
export async function taskClaimFast(db: Db, plan: FastClaimPlan): Promise<FastClaimResult> {
  const { rows } = await executeDirect(db, taskClaimFastStatement(plan));
  const summary = rows[0];
  if (summary === undefined) throw new Error('the claim statement returned no summary row');
  const claimed = rows
    .filter((row) => row.position !== null)
    .map((row) => ({
      task: leasedTaskFromRow(row),
      workflowName: row.w_name,
      input: row.w_input,
      outputs: row.outputs ?? {},
    }));
  return {
    decided: summary.decided,
    claimed,
    skipped: Number(summary.candidate_count) - Number(summary.ready_count),
    now: summary.summary_now,
  };
}

/** The smallest power of two at or above `limit`: the claim statement's literal bound. */
function limitBound(limit: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1, limit)));
}

/** The statement of `taskClaimFast`, for it and for EXPLAIN in tests. */
export function taskClaimFastStatement(plan: FastClaimPlan) {
  return sql<
    LeasedTaskRow & {
      readonly w_name: string;
      readonly w_input: unknown;
      readonly position: string | null;
      readonly outputs: Record<string, unknown> | null;
      readonly candidate_count: string;
      readonly ready_count: string;
      readonly decided: boolean;
      readonly summary_now: Date;
    }
  >`
    ${preparedSql}
    with clock as materialized (select causeway_statement_now() as now),
    candidates as materialized (
      -- The inner limit is a literal (the limit rounded up to a power of two): it tells the
      -- planner how few rows come, so the generic plan it caches and reuses (instead of
      -- planning this statement on every call) probes indexes as a custom plan would, and a
      -- connection holds a handful of such plans, not one per limit. The outer limit takes
      -- exactly the rows wanted; rows are locked only as they are taken.
      select * from (
        select id, workflow_id, step, run_at, deadline_at from causeway_tasks as t
        where state = 'queued' and queue = ${plan.queue}
          and run_at <= (select now from clock)
          and ${definedWorkflowStep(sql`t`, plan.stepKeys)}
        order by run_at
        limit ${sql.lit(limitBound(plan.limit))}
        for update skip locked
      ) as bounded
      limit ${plan.limit}
    ),
    locked as materialized (
      select id, name, state, input from causeway_workflows
      -- An array, not a semi-join: primary-key probes, never a hash of the whole table.
      where id = any(array(select workflow_id from candidates))
      order by id
      for update skip locked
    ),
    ready as materialized (
      select c.id, c.workflow_id, c.step, c.deadline_at, l.state as parent_state, l.name,
        l.input, row_number() over (order by c.run_at, c.id) as position,
        n.name is not null as name_defined, s.name is not null as step_defined,
        s.upstream, m.after_state
      from candidates as c
      join locked as l on l.id = c.workflow_id
      left join unnest(${constantArrayLiteral(plan.definedNames)}::text[]) as n(name)
        on n.name = l.name
      left join unnest(
        ${constantArrayLiteral(plan.stepNames)}::text[],
        ${constantArrayLiteral(plan.stepSteps)}::text[],
        ${constantArrayLiteral(plan.stepUpstream)}::jsonb[]
      ) as s(name, step, upstream) on s.name = l.name and s.step = c.step
      left join unnest(
        ${constantArrayLiteral(plan.parentFrom)}::text[],
        ${constantArrayLiteral(plan.parentTo)}::text[]
      ) as m(from_state, after_state) on m.from_state = l.state
    ),
    decision as materialized (
      select not exists (
        select 1 from ready, clock
        where ready.name_defined and (not ready.step_defined or ready.after_state is null
          or ready.deadline_at <= clock.now)
      ) as decided
    ),
    claimable as materialized (
      select ready.* from ready, decision where decision.decided and ready.name_defined
    ),
    task_update as (
      update causeway_tasks as t set
        state = ${plan.to},
        attempt = t.attempt + ${plan.attemptIncrement}::integer,
        effect_started = ${plan.effectStarted}::boolean,
        run_at = null,
        lease_holder = ${plan.holder},
        lease_epoch = t.lease_epoch + 1,
        lease_expires_at = clock.now + ${plan.leaseMs}::integer * interval '1 millisecond',
        updated_at = clock.now
      from claimable as c, clock
      -- Conditional on the state it was read in (R1), like every other write of an edge.
      where t.id = c.id and t.state = 'queued'
      -- What the attempt reads (pg parses every column it is sent), and its workflow's.
      returning ${leasedTaskColumns}, c.position, c.name as w_name, c.input as w_input,
        c.upstream
    ),
    -- Each parent once, changed by its first claim in claim order. A CTE of its own, so the
    -- update joins a plain scan (see the settle statement on following concurrent updates).
    parent_change as materialized (
      select distinct on (workflow_id) workflow_id, parent_state, after_state, position, step
      from claimable
      where after_state <> parent_state
      order by workflow_id, position
    ),
    workflow_update as (
      update causeway_workflows as w set state = c.after_state, updated_at = clock.now
      from parent_change as c, clock
      where w.id = c.workflow_id and w.state = c.parent_state
      returning w.id, c.parent_state, c.after_state, c.position, c.step
    ),
    log_insert as (
      insert into causeway_transitions (workflow_id, task_id, step, from_state, to_state,
        reason, error_category, error_summary, actor, attempt, at, detail)
      select workflow_id, task_id, step, from_state, to_state, ${plan.reason}, null, null,
        ${plan.actor}, attempt, clock.now, detail
      from (
        select workflow_id, id as task_id, step, 'queued' as from_state, state as to_state,
          attempt, null::jsonb as detail, position * 2 as sort
        from task_update
        union all
        select id, null, null, parent_state, after_state, 0, jsonb_build_object('step', step),
          position * 2 + 1
        from workflow_update
      ) as v, clock
      order by sort
      returning 1
    ),
    announce as (
      select pg_notify(${transitionsChannel}, '') where exists (select 1 from claimable)
    ),
    summary as materialized (
      -- Fails the statement, undoing its writes, if it wrote other than it decided.
      select *, causeway_written_as_decided(decided_count, written_count) as checked
      from (select (select count(*) from candidates) as candidate_count,
        (select count(*) from ready) as ready_count,
        (select decided from decision) as decided,
        (select now from clock) as summary_now,
        (select count(*) from log_insert) as log_count,
        (select count(*) from announce) as announce_count,
        (select count(*) from claimable) + (select count(*) from parent_change)
          as decided_count,
        (select count(*) from task_update) + (select count(*) from workflow_update)
          as written_count) as counts
    )
    -- The summary once, on the first row (pg parses every column of every row it is sent).
    select tu.*, first.candidate_count, first.ready_count, first.decided, first.summary_now,
      -- Each upstream step's row by the unique (workflow_id, step) index, whatever the
      -- statistics say about workflow_id alone.
      case when jsonb_array_length(tu.upstream) > 0 then (
        select jsonb_object_agg(u.step, (
          select s.output from causeway_tasks as s
          where s.workflow_id = tu.workflow_id and s.step = u.step))
        from jsonb_array_elements_text(tu.upstream) as u(step)
      ) end as outputs
    from summary left join task_update as tu on true
    left join summary as first
      on tu.position is null or tu.position = (select min(position) from task_update)
    order by tu.position`;
}

/**
 * What a one-statement settle of `complete` results may do, read off the pure machine
 * (`deriveCompleteOutcomes`) and the engine's definitions, with the results themselves.
 */
export interface FastCompletePlan {
  /**
   * The results, in request order; each must be its batch's only request for its workflow
   * (the caller leaves the others to the full decision, which applies them in request order).
   */
  readonly taskIds: readonly string[];
  readonly workflowIds: readonly string[];
  /** The lease epoch each result was produced under (R7). */
  readonly epochs: readonly number[];
  readonly outputs: readonly (string | null)[];
  /**
   * The workflow of every request in the batch, these results and the others alike: all are
   * locked here in one id order, and a workflow with more than one request is left to the full
   * decision (which applies a batch in request order).
   */
  readonly batchWorkflowIds: readonly string[];
  /** The lease holder every result was produced under, and its actor string. */
  readonly holder: string;
  readonly actor: string;
  readonly completeFrom: readonly string[];
  readonly completeTo: readonly string[];
  readonly completeReason: readonly string[];
  readonly promoteTo: string;
  readonly promoteReason: string;
  readonly promoteActor: string;
  /** Task states in bit order, and the parent's state for each presence mask. */
  readonly stateOrder: readonly string[];
  readonly presenceMasks: readonly number[];
  readonly presenceStates: readonly string[];
  /** Steps this engine defines: workflow name, step, its direct upstream steps (JSON), order. */
  readonly stepNames: readonly string[];
  readonly stepSteps: readonly string[];
  readonly stepAfter: readonly string[];
  readonly stepUpstream: readonly string[];
  readonly stepOrder: readonly number[];
  /**
   * Steps a result makes ready that this worker leases in the same statement, per queue at
   * most `limits` (empty: none). Only where the claim edge leaves the parent as it is and the
   * step's deadline has not passed; the rest are queued as usual.
   */
  readonly chain: FastChainPlan;
}

/** The claim edge of chained steps, read off the machine as the one-statement claim does. */
export interface FastChainPlan {
  readonly queues: readonly string[];
  readonly limits: readonly number[];
  readonly to: string;
  readonly reason: string;
  readonly attemptIncrement: number;
  readonly effectStarted: boolean;
  readonly leaseMs: number;
  readonly parentFrom: readonly string[];
  readonly parentTo: readonly string[];
}

/**
 * A result the statement wrote: the request's position, its edge, the attempt, and the task
 * after it if it was asked for (`withTasks`).
 */
export interface FastCompleted {
  readonly position: number;
  readonly from: string;
  readonly to: string;
  readonly reason: string;
  readonly attempt: number;
  readonly task: TaskRecord | null;
}

/**
 * Writes `complete` results in one statement, for the common case: it locks every workflow of
 * the batch in id order and all their tasks (as every decider does, waiting for them), then,
 * for each result whose task still holds the lease (R7) and has a complete edge from its state
 * (each is the batch's only request for its workflow: `FastCompletePlan.taskIds`): the
 * task's edge, the promotion of each
 * pending step whose upstream steps have now all succeeded, the parent's new state and the log
 * rows in the order the full decision writes them (task, promotions in definition order,
 * parent), plus the wake-ups. Results it does not decide are left untouched for the full
 * decision (in the same transaction, or after this statement commits on its own).
 */
export async function taskCompleteFast(
  db: Db,
  plan: FastCompletePlan,
  { withTasks }: { readonly withTasks: boolean },
): Promise<{
  readonly completed: readonly FastCompleted[];
  /** Steps made ready and leased to the plan's holder in the same statement (`chain`). */
  readonly chained: readonly FastClaimedTask[];
  readonly now: Date;
}> {
  const { chain } = plan;
  const { rows } = await executeDirect(
    db,
    sql<
      Selectable<TaskTable> & {
        readonly position: string | null;
        readonly edge_from: string;
        readonly edge_to: string;
        readonly edge_reason: string;
        /** On the first row only. */
        readonly summary_now: Date | null;
        readonly chained: readonly ChainedRow[] | null;
      }
    >`
    ${preparedSql}
    with clock as materialized (select causeway_statement_now() as now),
    request as materialized (
      select * from unnest(${arrayLiteral(plan.taskIds)}::uuid[],
        ${arrayLiteral(plan.workflowIds)}::uuid[], ${arrayLiteral(plan.epochs)}::bigint[],
        ${arrayLiteral(plan.outputs)}::text[])
        with ordinality as r(task_id, workflow_id, epoch, output, position)
    ),
    locked_workflow as materialized (
      select id, name, state from causeway_workflows
      -- An array, not a semi-join: the planner then probes the primary key for each id
      -- instead of hashing the whole table whenever it is small enough to look cheap.
      where id = any(${arrayLiteral(plan.batchWorkflowIds)}::uuid[])
      order by id
      for update
    ),
    locked_task as materialized (
      select id, workflow_id, step, queue, state, attempt, lease_holder, lease_epoch,
        lease_expires_at, deadline_at, output
      from causeway_tasks
      -- An array, not a semi-join, as for the workflows: a settle probed the index until the
      -- planner found the table small (a bench's few thousand rows) and scanned all of it.
      where workflow_id = any(array(select id from locked_workflow))
      order by id
      for update
    ),
    step as materialized (
      select * from unnest(
        ${constantArrayLiteral(plan.stepNames)}::text[],
        ${constantArrayLiteral(plan.stepSteps)}::text[],
        ${constantArrayLiteral(plan.stepAfter)}::jsonb[],
        ${constantArrayLiteral(plan.stepUpstream)}::jsonb[],
        ${constantArrayLiteral(plan.stepOrder)}::integer[]
      ) as s(name, step, after, upstream, ord)
    ),
    cause as materialized (
      select r.task_id, r.workflow_id, r.output, r.position, r.epoch, t.step,
        t.state as from_state, t.attempt, e.to_state, e.reason, w.name,
        w.state as parent_before
      from request as r
      -- Plain joins, not correlated subqueries: those ran once per pair of rows the join
      -- considered, a quarter of the server's time at 50 results a batch.
      join locked_task as t on t.id = r.task_id and t.workflow_id = r.workflow_id
      join locked_workflow as w on w.id = r.workflow_id
      join step as s on s.name = w.name and s.step = t.step
      join unnest(
        ${constantArrayLiteral(plan.completeFrom)}::text[],
        ${constantArrayLiteral(plan.completeTo)}::text[],
        ${constantArrayLiteral(plan.completeReason)}::text[]
      ) as e(from_state, to_state, reason) on e.from_state = t.state
      where t.lease_holder = ${plan.holder} and t.lease_epoch = r.epoch
        and t.lease_expires_at > (select now from clock)
    ),
    after_cause as materialized (
      select t.id, t.workflow_id, t.step, t.queue, t.attempt, t.deadline_at, c.name,
        case when t.id = c.task_id then c.to_state else t.state end as state
      from locked_task as t
      join cause as c on c.workflow_id = t.workflow_id
    ),
    -- A pending step is promoted when each of its upstream steps has succeeded: counted with
    -- joins (linear in the batch) rather than a correlated subquery per pending step.
    promoted as materialized (
      select a.id, a.workflow_id, a.step, a.queue, a.attempt, a.deadline_at, s.ord, s.upstream
      from after_cause as a
      join step as s on s.name = a.name and s.step = a.step
      left join lateral jsonb_array_elements_text(s.after) as u(step) on true
      left join after_cause as done
        on done.workflow_id = a.workflow_id and done.step = u.step and done.state = 'succeeded'
      where a.state = 'pending'
      group by a.id, a.workflow_id, a.step, a.queue, a.attempt, a.deadline_at, s.ord, s.upstream
      having count(u.step) = count(done.id)
    ),
    parent as materialized (
      select c.workflow_id, c.parent_before, g.state as parent_after
      from cause as c
      join (
        select a.workflow_id,
          bit_or(1 << (array_position(${constantArrayLiteral(plan.stateOrder)}::text[],
            case when p.id is null then a.state else ${plan.promoteTo} end) - 1)) as mask
        from after_cause as a
        left join promoted as p on p.id = a.id
        group by a.workflow_id
      ) as m on m.workflow_id = c.workflow_id
      join unnest(
        ${constantArrayLiteral(plan.presenceMasks)}::integer[],
        ${constantArrayLiteral(plan.presenceStates)}::text[]
      ) as g(mask, state) on g.mask = m.mask
    ),
    -- Promoted steps this worker leases at once, per queue up to its limit, in result order:
    -- only where the claim leaves the parent as the promotion left it (so no parent edge is
    -- due for the claim) and the deadline has not passed (that claim ends the task instead).
    chained as materialized (
      select r.id, r.position, r.ord
      from (
        select p.id, p.queue, c.position, p.ord,
          row_number() over (partition by p.queue order by c.position, p.ord) as nth
        from promoted as p
        join cause as c on c.workflow_id = p.workflow_id
        join parent as pa on pa.workflow_id = p.workflow_id
        join unnest(
          ${constantArrayLiteral(chain.parentFrom)}::text[],
          ${constantArrayLiteral(chain.parentTo)}::text[]
        ) as m(from_state, to_state)
          on m.from_state = pa.parent_after and m.to_state = pa.parent_after
        where p.deadline_at is null or p.deadline_at > (select now from clock)
      ) as r
      join unnest(${chain.queues}::text[], ${chain.limits}::integer[]) as q(queue, most)
        on q.queue = r.queue
      where r.nth <= q.most
    ),
    promoted_plan as materialized (
      select p.*, ch.id is not null as chained, ch.position
      from promoted as p
      left join chained as ch on ch.id = p.id
    ),
    -- Two updates, each joined to one CTE: rows a concurrent transaction changed since the
    -- statement began are then followed to their latest version (EvalPlanQual) reliably.
    completed_update as (
      update causeway_tasks as t set
        state = c.to_state,
        lease_holder = null,
        lease_expires_at = null,
        receipt_id = null,
        receipt_deadline_at = null,
        output = coalesce(c.output::jsonb, t.output),
        updated_at = clock.now
      from cause as c, clock
      -- Conditional on the state and lease it was read with (R1).
      where t.id = c.task_id and t.state = c.from_state and t.lease_epoch = c.epoch
      returning ${taskColumns}, c.position
    ),
    -- A chained step takes both edges in one write: pending → queued → leased.
    promoted_update as (
      update causeway_tasks as t set
        state = case when p.chained then ${chain.to} else ${plan.promoteTo} end,
        attempt = t.attempt + case when p.chained then ${chain.attemptIncrement}::integer else 0 end,
        effect_started = case when p.chained then ${chain.effectStarted}::boolean
          else t.effect_started end,
        run_at = case when p.chained then null else clock.now end,
        lease_holder = case when p.chained then ${plan.holder} end,
        lease_epoch = t.lease_epoch + case when p.chained then 1 else 0 end,
        lease_expires_at = case when p.chained
          then clock.now + ${chain.leaseMs}::integer * interval '1 millisecond' end,
        receipt_id = null,
        receipt_deadline_at = null,
        updated_at = clock.now
      from promoted_plan as p, clock
      where t.id = p.id and t.state = 'pending'
      returning t.id, t.workflow_id, t.step, t.queue, t.state, t.attempt, t.lease_epoch,
        t.deadline_at, t.evidence, t.checkpoints, p.chained, p.position, p.ord, p.upstream
    ),
    workflow_update as (
      update causeway_workflows as w set state = p.parent_after, updated_at = clock.now
      from parent as p, clock
      where w.id = p.workflow_id and p.parent_after <> p.parent_before
        and w.state = p.parent_before
      returning w.id
    ),
    log_insert as (
      insert into causeway_transitions (workflow_id, task_id, step, from_state, to_state,
        reason, error_category, error_summary, actor, attempt, at, detail)
      select workflow_id, task_id, step, from_state, to_state, reason, null, null, actor,
        attempt, clock.now, detail
      from (
        select c.workflow_id, c.task_id, c.step, c.from_state, c.to_state, c.reason,
          ${plan.actor} as actor, c.attempt, null::jsonb as detail, c.position, 0 as rank,
          0 as ord
        from cause as c
        union all
        select p.workflow_id, p.id, p.step, 'pending', ${plan.promoteTo}, ${plan.promoteReason},
          ${plan.promoteActor}, p.attempt, null, c.position, 1, p.ord
        from promoted as p
        join cause as c on c.workflow_id = p.workflow_id
        union all
        select c.workflow_id, null, null, pa.parent_before, pa.parent_after, c.reason,
          ${plan.actor}, 0, jsonb_build_object('step', c.step), c.position, 2, 0
        from parent as pa
        join cause as c on c.workflow_id = pa.workflow_id
        where pa.parent_after <> pa.parent_before
        union all
        -- The claims of chained steps come after every result's rows, as the full decision
        -- writes them when the claims follow the results.
        select p.workflow_id, p.id, p.step, ${plan.promoteTo}, ${chain.to}, ${chain.reason},
          ${plan.actor}, p.attempt + ${chain.attemptIncrement}::integer, null, p.position, 3,
          p.ord
        from promoted_plan as p
        where p.chained
      ) as v, clock
      order by rank = 3, position, rank, ord
      returning 1
    ),
    wake as (
      select pg_notify(${wakeupChannel}, queue)
      from (select distinct queue from promoted_plan where not chained) as q
    ),
    -- What the attempts of chained steps need: the leased task, its workflow's name and
    -- input, and its upstream steps' outputs (this statement's own result included; the
    -- others from the locked rows, which are current even if the statement waited).
    chained_out as materialized (
      select jsonb_agg(jsonb_build_object(
        'id', pu.id, 'workflow_id', pu.workflow_id, 'step', pu.step, 'queue', pu.queue,
        'state', pu.state, 'attempt', pu.attempt, 'lease_epoch', pu.lease_epoch,
        'deadline_at', pu.deadline_at, 'evidence', pu.evidence, 'checkpoints', pu.checkpoints,
        'w_name', c.name,
        'w_input', (select w.input from causeway_workflows as w where w.id = pu.workflow_id),
        'outputs', coalesce((
          select jsonb_object_agg(u.step, case when u.step = c.step
            then coalesce(c.output::jsonb, lt.output) else lt.output end)
          from jsonb_array_elements_text(pu.upstream) as u(step)
          join locked_task as lt on lt.workflow_id = pu.workflow_id and lt.step = u.step
        ), '{}'::jsonb)
      ) order by pu.position, pu.ord) as tasks
      from promoted_update as pu
      join cause as c on c.workflow_id = pu.workflow_id
      where pu.chained
    ),
    announce as (
      select pg_notify(${transitionsChannel}, '') where exists (select 1 from cause)
    ),
    summary as materialized (
      -- Fails the statement, undoing its writes, if it wrote other than it decided.
      select *, causeway_written_as_decided(decided_count, written_count) as checked
      from (select (select now from clock) as summary_now,
        (select count(*) from log_insert) as log_count,
        (select count(*) from workflow_update) as workflow_count,
        (select count(*) from wake) as wake_count,
        (select count(*) from announce) as announce_count,
        (select tasks from chained_out) as chained,
        (select count(*) from cause) + (select count(*) from promoted)
          + (select count(*) from parent where parent_after <> parent_before) as decided_count,
        (select count(*) from completed_update) + (select count(*) from promoted_update)
          + (select count(*) from workflow_update) as written_count) as counts
    )
    -- Whole task rows only for callers that read them: pg parses every column it is sent.
    select ${withTasks ? sql`tu.*` : sql`tu.attempt, tu.position`},
      c.from_state as edge_from, c.to_state as edge_to, c.reason as edge_reason,
      -- The summary once, on the first row (pg parses every column of every row).
      case when first.is_first then summary.summary_now end as summary_now,
      case when first.is_first then summary.chained end as chained
    from summary
    left join completed_update as tu on true
    left join cause as c on c.task_id = tu.id
    cross join lateral (select tu.position is null
      or tu.position = (select min(position) from completed_update) as is_first) as first
    order by tu.position`,
  );
  const summary = rows[0];
  if (summary?.summary_now == null) throw new Error('the settle statement returned no summary row');
  const now = summary.summary_now;
  const completed = rows
    .filter((row) => row.position !== null)
    .map((row) => ({
      position: Number(row.position),
      from: row.edge_from,
      to: row.edge_to,
      reason: row.edge_reason,
      attempt: row.attempt,
      task: withTasks ? taskFromRow(row) : null,
    }));
  const chained = (summary.chained ?? []).map((row) => ({
    task: leasedTaskFromRow({
      ...row,
      lease_epoch: String(row.lease_epoch),
      deadline_at: row.deadline_at === null ? null : new Date(row.deadline_at),
    }),
    workflowName: row.w_name,
    input: row.w_input,
    outputs: row.outputs,
  }));
  return { completed, chained, now };
}

/** A chained step as the settle statement sends it (one JSON object; times as text). */
interface ChainedRow {
  readonly id: string;
  readonly workflow_id: string;
  readonly step: string;
  readonly queue: string;
  readonly state: string;
  readonly attempt: number;
  readonly lease_epoch: number;
  readonly deadline_at: string | null;
  readonly evidence: Selectable<TaskTable>['evidence'];
  readonly checkpoints: Selectable<TaskTable>['checkpoints'];
  readonly w_name: string;
  readonly w_input: unknown;
  readonly outputs: Record<string, unknown>;
}

/** The wake-up payload that means "the outbox has work" (queue names start with a letter). */
export const outboxWakeup = '@outbox';

/** A send request for the outbox (R22), written with its task's edge. */
export interface NewOutboxRow {
  readonly id: string;
  readonly taskId: string;
  readonly workflowId: string;
  readonly channel: string;
  readonly payloadJson: string;
}

/** What one decision writes: task rows, parent states, log rows, outbox rows and wake-ups. */
export interface RunChanges {
  readonly outbox?: readonly NewOutboxRow[];
  readonly tasks: readonly TaskWrite[];
  readonly workflows: readonly { id: string; expectedState: string; state: string }[];
  readonly transitions: readonly NewTransitionRow[];
  readonly wakeQueues: readonly string[];
}

/**
 * Writes one decision in a single statement (data-modifying CTEs): every task conditional
 * on the state and lease epoch it was read with (R1), the parents, the log rows in order
 * (R24) and the wake-ups. Returns how many task and workflow rows matched.
 */
export async function runChangesWrite(
  tx: Transaction<CausewayDatabase>,
  changes: RunChanges,
  now: Date,
): Promise<{ tasks: number; workflows: number }> {
  const tasks = changes.tasks;
  const column = <T>(pick: (write: TaskWrite) => T) => tasks.map(pick);
  const log = changes.transitions;
  const outbox = changes.outbox ?? [];
  const { rows } = await sql<{ tasks: string; workflows: string }>`
    ${preparedSql}
    with task_update as (
      update causeway_tasks as t set
        state = v.state,
        attempt = v.attempt,
        replay_count = v.replay_count,
        effect_started = v.effect_started,
        run_at = v.run_at,
        deadline_at = v.deadline_at,
        lease_holder = v.lease_holder,
        lease_epoch = v.lease_epoch,
        lease_expires_at = v.lease_expires_at,
        output = coalesce(v.output::jsonb, t.output),
        receipt_id = v.receipt_id,
        receipt_deadline_at = v.receipt_deadline_at,
        last_error_category = v.last_error_category,
        last_error = v.last_error,
        updated_at = ${now}
      from unnest(
        ${column((w) => w.id)}::uuid[],
        ${column((w) => w.expectedState)}::text[],
        ${column((w) => w.expectedEpoch)}::bigint[],
        ${column((w) => w.state)}::text[],
        ${column((w) => w.attempt)}::integer[],
        ${column((w) => w.replayCount)}::integer[],
        ${column((w) => w.effectStarted)}::boolean[],
        ${column((w) => w.runAt)}::timestamptz[],
        ${column((w) => w.deadlineAt)}::timestamptz[],
        ${column((w) => w.leaseHolder)}::text[],
        ${column((w) => w.leaseEpoch)}::bigint[],
        ${column((w) => w.leaseExpiresAt)}::timestamptz[],
        ${column((w) => w.outputJson)}::text[],
        ${column((w) => w.receiptId)}::text[],
        ${column((w) => w.receiptDeadlineAt)}::timestamptz[],
        ${column((w) => w.lastErrorCategory)}::text[],
        ${column((w) => w.lastError)}::text[]
      ) as v(id, expected_state, expected_epoch, state, attempt, replay_count, effect_started,
             run_at, deadline_at, lease_holder, lease_epoch, lease_expires_at, output,
             receipt_id, receipt_deadline_at, last_error_category, last_error)
      where t.id = v.id and t.state = v.expected_state and t.lease_epoch = v.expected_epoch
      returning 1
    ),
    workflow_update as (
      update causeway_workflows as w set state = v.state, updated_at = ${now}
      from unnest(
        ${changes.workflows.map((change) => change.id)}::uuid[],
        ${changes.workflows.map((change) => change.expectedState)}::text[],
        ${changes.workflows.map((change) => change.state)}::text[]
      ) as v(id, expected_state, state)
      where w.id = v.id and w.state = v.expected_state
      returning 1
    ),
    log_insert as (
      ${logRowsInsert(log, sql`${now}`, sql``)}
      returning 1
    ),
    outbox_insert as (
      insert into causeway_outbox (id, task_id, workflow_id, channel, payload, state,
        next_attempt_at, created_at)
      select id, task_id, workflow_id, channel, payload::jsonb, 'pending', ${now}, ${now}
      from unnest(
        ${outbox.map((row) => row.id)}::uuid[],
        ${outbox.map((row) => row.taskId)}::uuid[],
        ${outbox.map((row) => row.workflowId)}::uuid[],
        ${outbox.map((row) => row.channel)}::text[],
        ${outbox.map((row) => row.payloadJson)}::text[]
      ) as v(id, task_id, workflow_id, channel, payload)
      returning 1
    ),
    wake as (
      select pg_notify(${wakeupChannel}, queue)
      from unnest(${[...new Set([...changes.wakeQueues, ...(outbox.length > 0 ? [outboxWakeup] : [])])]}::text[]) as queue
    ),
    announce as (
      select pg_notify(${transitionsChannel}, '') where ${log.length > 0}::boolean
    )
    select (select count(*) from task_update) as tasks,
           (select count(*) from workflow_update) as workflows,
           (select count(*) from log_insert) as log,
           (select count(*) from outbox_insert) as outbox,
           (select count(*) from wake) as wake,
           (select count(*) from announce) as announce`.execute(tx);
  const counts = rows[0] as { tasks: string; workflows: string };
  return { tasks: Number(counts.tasks), workflows: Number(counts.workflows) };
}

/** Ready backlog of a queue, for admission control. */
export async function queueBacklog(db: Db, queue: string): Promise<number> {
  const { rows } = await sql<{ count: string }>`
    select count(*) as count from causeway_tasks where state = 'queued' and queue = ${queue}`.execute(
    db,
  );
  return Number(rows[0]?.count ?? 0);
}

/** Serializes admission to one capped queue for the rest of the transaction. */
export async function queueLockAdmission(
  tx: Transaction<CausewayDatabase>,
  queue: string,
): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('causeway_admission'), hashtext(${queue}))`.execute(
    tx,
  );
}

/**
 * Renews leases (R9): only where this holder still holds the same claim, the task is still
 * `leased`, and the lease has not run out. Returns the ids that were renewed.
 */
export async function leaseRenewMany(
  db: Db,
  holder: string,
  leases: readonly { taskId: string; epoch: number }[],
  leaseMs: number,
): Promise<Set<string>> {
  if (leases.length === 0) return new Set();
  // Rows are locked in id order, like every multi-row task write, so renewals and
  // decisions cannot deadlock each other.
  const { rows } = await sql<{ id: string }>`
    ${preparedSql}
    with renewable as (
      select t.id from causeway_tasks as t
      join unnest(
        ${leases.map((lease) => lease.taskId)}::uuid[],
        ${leases.map((lease) => lease.epoch)}::bigint[]
      ) as v(id, epoch) on t.id = v.id and t.lease_epoch = v.epoch
      where t.lease_holder = ${holder} and t.state = 'leased'
        and t.lease_expires_at > causeway_now()
      order by t.id
      for update of t
    )
    update causeway_tasks as t
    set lease_expires_at = causeway_now() + ${leaseMs} * interval '1 millisecond'
    from renewable
    where t.id = renewable.id
    returning t.id`.execute(db);
  return new Set(rows.map((row) => row.id));
}

/**
 * A fenced write of the running claim: marks "effect started" and optionally stores a
 * checkpoint or progress. Allowed while `leased` or `cancel_requested` (a checkpoint records
 * what already happened). Returns the task's state, or null if the claim is no longer held.
 */
export async function taskWriteFenced(
  db: Db,
  fence: LeaseFence,
  change: {
    effectStarted?: boolean;
    evidence?: string;
    checkpoint?: { name: string; dataJson: string };
    progressJson?: string;
  },
): Promise<'leased' | 'cancel_requested' | null> {
  const checkpoint = change.checkpoint;
  const { rows } = await sql<{ state: 'leased' | 'cancel_requested' }>`
    update causeway_tasks set
      -- Only a running claim starts an effect; under cancel_requested the cancel wins.
      effect_started = effect_started or (${change.effectStarted ?? false} and state = 'leased'),
      checkpoints = case when ${checkpoint?.name ?? null}::text is null then checkpoints
                    else checkpoints || jsonb_build_object(${checkpoint?.name ?? null}::text, ${checkpoint?.dataJson ?? null}::jsonb) end,
      progress = coalesce(${change.progressJson ?? null}::jsonb, progress),
      evidence = coalesce(${change.evidence ?? null}::text, evidence)
    where id = ${fence.taskId} and lease_holder = ${fence.holder} and lease_epoch = ${fence.epoch}
      and state in ('leased', 'cancel_requested') and lease_expires_at > causeway_now()
    returning state`.execute(db);
  return rows[0]?.state ?? null;
}

/** Leases that ran out (R10), oldest first. */
export async function taskListExpiredLeases(
  db: Db,
  limit: number,
): Promise<{ id: string; epoch: number }[]> {
  const { rows } = await sql<{ id: string; lease_epoch: string }>`
    select id, lease_epoch from causeway_tasks
    where state in ('leased', 'cancel_requested') and lease_expires_at <= causeway_now()
    order by lease_expires_at limit ${limit}`.execute(db);
  return rows.map((row) => ({ id: row.id, epoch: Number(row.lease_epoch) }));
}

/** Queued tasks whose absolute deadline passed before they started (R28). */
export async function taskListQueuedPastDeadline(db: Db, limit: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select id from causeway_tasks
    where state = 'queued' and deadline_at is not null and deadline_at <= causeway_now()
    order by deadline_at limit ${limit}`.execute(db);
  return rows.map((row) => row.id);
}

/** Tasks whose receipt did not arrive in time (R23). */
export async function taskListReceiptOverdue(db: Db, limit: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select id from causeway_tasks
    where state = 'awaiting_receipt' and receipt_deadline_at <= causeway_now()
    order by receipt_deadline_at limit ${limit}`.execute(db);
  return rows.map((row) => row.id);
}

/** Dead tasks whose dead edge has this reason and happened in [from, to] (R26). */
export async function taskListDeadByReason(
  db: Db,
  reason: string,
  from: Date,
  to: Date,
): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select t.id from causeway_tasks t
    cross join lateral (
      select reason, at from causeway_transitions tr
      where tr.workflow_id = t.workflow_id and tr.task_id = t.id order by tr.id desc limit 1
    ) as last
    where t.state = 'dead' and last.reason = ${reason} and last.at between ${from} and ${to}
    order by t.id`.execute(db);
  return rows.map((row) => row.id);
}

/** The reason code of a task's latest edge (what a repeated request answers, R15). */
export async function taskLastReason(db: Db, taskId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('causeway_transitions')
    .select('reason')
    // Through the (workflow_id, id) index: the log has no index of its own on task_id.
    .where('workflow_id', '=', (eb) =>
      eb.selectFrom('causeway_tasks').select('workflow_id').where('id', '=', taskId),
    )
    .where('task_id', '=', taskId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.reason;
}

export async function workflowGet(db: Db, id: string): Promise<WorkflowRecord | undefined> {
  const row = await db
    .selectFrom('causeway_workflows')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : workflowFromRow(row);
}

export async function taskGet(db: Db, id: string): Promise<TaskRecord | undefined> {
  const row = await db
    .selectFrom('causeway_tasks')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : taskFromRow(row as Selectable<TaskTable>);
}

export async function transitionListByWorkflow(db: Db, workflowId: string) {
  const rows = await db
    .selectFrom('causeway_transitions')
    .selectAll()
    .where('workflow_id', '=', workflowId)
    .orderBy('id')
    .execute();
  return rows.map(transitionFromRow);
}

/** An outbox row a dispatcher took for delivery. */
export interface OutboxDue {
  readonly id: string;
  readonly taskId: string;
  readonly workflowId: string;
  readonly channel: string;
  readonly payload: unknown;
  /** This delivery attempt's number (1 for the first). */
  readonly attempt: number;
}

/**
 * Takes due outbox rows for delivery (SKIP LOCKED, so many dispatchers never take the same
 * row) and pushes their due time out by `visibilityMs`: if this dispatcher dies mid-send,
 * the row becomes due again and is sent with the same idempotency key.
 */
export async function outboxTakeDue(
  db: Db,
  limit: number,
  visibilityMs: number,
): Promise<OutboxDue[]> {
  const { rows } = await sql<{
    id: string;
    task_id: string;
    workflow_id: string;
    channel: string;
    payload: unknown;
    attempts: number;
  }>`
    ${preparedSql}
    update causeway_outbox as o
    set attempts = o.attempts + 1,
        next_attempt_at = causeway_now() + ${visibilityMs} * interval '1 millisecond'
    where o.id in (
      select id from causeway_outbox
      where state = 'pending' and next_attempt_at <= causeway_now()
      order by next_attempt_at
      limit ${limit}
      for update skip locked
    )
    returning o.id, o.task_id, o.workflow_id, o.channel, o.payload, o.attempts`.execute(db);
  return rows.map((row) => ({
    id: row.id,
    taskId: row.task_id,
    workflowId: row.workflow_id,
    channel: row.channel,
    payload: row.payload,
    attempt: row.attempts,
  }));
}

/** One delivery attempt's record (R22: every attempt is kept) and the row's next state. */
export interface OutboxDeliveryRecord {
  readonly outboxId: string;
  readonly attempt: number;
  readonly outcome: 'delivered' | 'retry' | 'failed';
  readonly statusCode: number | null;
  readonly errorCategory: string | null;
  readonly error: string | null;
  readonly holder: string;
  /** For `retry`: when to try again, from database now. */
  readonly retryInMs: number | null;
}

/**
 * Records a delivery attempt and moves the outbox row on, only while this attempt still
 * owns the row (same attempt number, still pending). Returns false if another dispatcher
 * took it meanwhile (its visibility timeout ran out): then nothing is written.
 */
export async function outboxRecordDelivery(
  tx: Transaction<CausewayDatabase>,
  record: OutboxDeliveryRecord,
): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    with moved as (
      update causeway_outbox set
        state = case ${record.outcome} when 'retry' then 'pending' else ${record.outcome} end,
        delivered_at = case when ${record.outcome} = 'delivered' then causeway_now() end,
        next_attempt_at = case when ${record.outcome} = 'retry'
          then causeway_now() + ${record.retryInMs ?? 0} * interval '1 millisecond'
          else next_attempt_at end,
        last_error_category = ${record.errorCategory},
        last_error = ${record.error}
      where id = ${record.outboxId} and attempts = ${record.attempt} and state = 'pending'
      returning id
    ),
    attempt_insert as (
      insert into causeway_outbox_deliveries (outbox_id, attempt, at, outcome, status_code,
        error_category, error, holder)
      select id, ${record.attempt}, causeway_now(), ${record.outcome}, ${record.statusCode},
        ${record.errorCategory}, ${record.error}, ${record.holder}
      from moved
      returning 1
    )
    select id from moved where (select count(*) from attempt_insert) >= 0`.execute(tx);
  return rows.length === 1;
}

/** The outbox rows of some tasks with their delivery counts ("submitted, sending"). */
export async function outboxListByTasks(
  db: Db,
  taskIds: readonly string[],
): Promise<
  {
    taskId: string;
    id: string;
    channel: string;
    state: string;
    attempts: number;
    lastError: string | null;
  }[]
> {
  if (taskIds.length === 0) return [];
  const { rows: found } = await sql<{
    task_id: string;
    id: string;
    channel: string;
    state: string;
    attempts: number;
    last_error: string | null;
  }>`
    select task_id, id, channel, state, attempts, last_error from causeway_outbox
    where task_id = any(${[...taskIds]}::uuid[]) order by created_at`.execute(db);
  return found.map((row) => ({
    taskId: row.task_id,
    id: row.id,
    channel: row.channel,
    state: row.state,
    attempts: row.attempts,
    lastError: row.last_error,
  }));
}

/**
 * Records a cancel that came after the submission was accepted (R14): only while the task
 * still awaits its receipt; the first ask is kept. Returns whether the task was waiting.
 */
export async function taskRecordLateCancel(
  db: Db,
  taskId: string,
  actor: string,
): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    update causeway_tasks
    set cancel_asked_at = coalesce(cancel_asked_at, causeway_now()),
        cancel_asked_by = coalesce(cancel_asked_by, ${actor})
    where id = ${taskId} and state = 'awaiting_receipt'
    returning id`.execute(db);
  return rows.length === 1;
}
