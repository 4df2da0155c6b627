import {
  submitDelayLimits,
  type TaskConcurrency,
  type TaskRate,
  type WorkflowAttributes,
} from '@causeway/workflow/internal';
import { type RawBuilder, sql } from 'kysely';
import { type ArrayElement, arrayLiteral } from '../array-literal';
import { type Db, preparedSql } from '../database';
import { executeDirect } from '../direct';
import { type DistinctRows, distinctRows } from '../distinct-rows';
import { transitionsChannel, wakeupChannel } from '../notify-channels';
import type { TraceCarrier } from '../schema';
import type { NewTransitionRow } from '../transition-row';
import { attributeInsertParts } from './attribute-insert';

export interface NewWorkflowRow {
  readonly id: string;
  readonly name: string;
  readonly state: string;
  readonly inputJson: string;
  readonly idempotencyKey: string | null;
  /** The definition's step names, comma-separated (`workflowStepsText`). */
  readonly steps: string;
  /** The definition's version it is accepted under (R54). */
  readonly version: string;
  /** A child workflow's place in its tree (R43); absent for a root. */
  readonly parent?: NewChildLink;
  /** The trace context it was submitted in (R57); absent or null: none. */
  readonly traceContext?: TraceCarrier | null;
  /** Its searchable attributes (R55); absent or null: none. */
  readonly attributes?: WorkflowAttributes | null;
}

/** Where a child workflow hangs in its tree (R43). */
export interface NewChildLink {
  readonly workflowId: string;
  readonly taskId: string;
  readonly index: number;
  readonly rootId: string;
  readonly depth: number;
  readonly detached: boolean;
}

/** A task of a new workflow; times are offsets from the database's now at insert. */
export interface NewSubmittedTask {
  readonly id: string;
  readonly workflowId: string;
  readonly step: string;
  readonly queue: string;
  readonly state: string;
  readonly maxAttempts: number;
  /** Seconds of backlog it may jump in its queue (R49). */
  readonly priority: number;
  /** Its concurrency slot (R50): group, key and limit, or null. */
  readonly concurrency: TaskConcurrency | null;
  /** What its claims spend of a rate limit (R51), or null. */
  readonly rate: TaskRate | null;
  /**
   * Queued roots run this long after `runFrom` (the acceptance when null); pending tasks
   * (null) have no run_at yet.
   */
  readonly runInMs: number | null;
  readonly runFrom: Date | null;
  /** Absolute deadline as an offset from acceptance, or null (R28, R29). */
  readonly deadlineInMs: number | null;
  /** A root event step's wait (R37): its event, and when it gives up from acceptance. */
  readonly wait: {
    readonly eventName: string;
    readonly eventKey: string | null;
    readonly timeoutMs: number;
  } | null;
  /** The error of a root that ends `dead` at admission (its event key failed, R58), or null. */
  readonly lastError: { readonly category: string | null; readonly summary: string } | null;
}

/**
 * Admits workflows in ONE statement (so, outside a transaction, one round trip): the
 * workflows (a row whose (name, key) exists is skipped, R2), the tasks and the `submitted`
 * transitions of those inserted, the workers' wake-up and the transition announcement.
 * Rows refer to their workflow and task by position, and repeated values (a step's task
 * columns, an edge's log columns) are sent once (`distinctRows`), both read back by array
 * subscripts: a uuid costs PostgreSQL about half a microsecond to parse, and a batch of a
 * thousand one-step workflows otherwise sends six thousand of them. Returns the ids of the
 * workflows it did not insert (their key existed).
 *
 * A `runAt` is checked against the database's clock in the same statement (R11): out of its
 * window, nothing is inserted and the answer carries the database time it was refused at.
 */
export async function submissionInsert(
  db: Db,
  rows: SubmissionRows,
  statement: SubmissionInsertStatement = submissionInsertStatement(rows),
): Promise<SubmissionOutcome> {
  const { rows: answer } = await executeDirect(db, statement);
  const refusedAtMs = answer[0]?.refused_at_ms ?? null;
  return {
    skipped: new Set(answer[0]?.skipped ?? []),
    refusedAtMs: refusedAtMs === null ? null : Number(refusedAtMs),
  };
}

/** The statement of `submissionInsert`. */
export type SubmissionInsertStatement = RawBuilder<{
  skipped: string[] | null;
  refused_at_ms?: string | null;
}>;

/**
 * The statement `submissionInsert` sends for `rows`: a batch of thousands of rows takes a
 * while to build, which a caller may do before the transaction that sends it.
 */
export function submissionInsertStatement(rows: SubmissionRows): SubmissionInsertStatement {
  const { workflows, tasks, transitions: log } = rows;
  const runAt = runAtAdmission(rows.runAtMs);
  // Workers are woken for what is due at once; delayed work is found by their polling (R5).
  const wakeQueues = [
    ...new Set(
      tasks.filter((task) => task.runInMs === 0 && task.runFrom === null).map((task) => task.queue),
    ),
  ];
  const workflowPosition = new Map(workflows.map((row, index) => [row.id, index + 1]));
  const taskPosition = new Map(tasks.map((task, index) => [task.id, index + 1]));
  const positionOf = (positions: Map<string, number>, id: string) => {
    const position = positions.get(id);
    if (position === undefined) throw new Error(`submission row refers to unknown id ${id}`);
    return position;
  };
  const workflowKinds = distinctRows(
    workflows,
    (a, b) =>
      a.name === b.name && a.state === b.state && a.steps === b.steps && a.version === b.version,
  );
  const taskKinds = distinctRows(
    tasks,
    (a, b) =>
      a.step === b.step &&
      a.queue === b.queue &&
      a.state === b.state &&
      a.maxAttempts === b.maxAttempts &&
      a.priority === b.priority &&
      a.runInMs === b.runInMs &&
      a.runFrom?.getTime() === b.runFrom?.getTime() &&
      a.deadlineInMs === b.deadlineInMs &&
      a.wait?.eventName === b.wait?.eventName &&
      a.wait?.timeoutMs === b.wait?.timeoutMs,
  );
  // Keys differ per workflow: sent per task, and only when some task waits.
  const eventKeys = tasks.some((task) => task.wait !== null)
    ? sql`${arrayLiteral(tasks.map((task) => task.wait?.eventKey ?? null))}::text[]`
    : sql`null::text[]`;
  // Only a root whose key failed (R58) has an error: the error columns are written, per task,
  // only by a batch that has one, so the common statement stays as it is.
  const failed = tasks.some((task) => task.lastError !== null);
  const errorColumns = failed ? sql`, last_error_category, last_error` : sql``;
  const errorValues = failed ? sql`, t.last_error_category, t.last_error` : sql``;
  const errorFields = failed
    ? sql`,
          (${arrayLiteral(tasks.map((task) => task.lastError?.category ?? null))}::text[])[v.position]
            as last_error_category,
          (${arrayLiteral(tasks.map((task) => task.lastError?.summary ?? null))}::text[])[v.position]
            as last_error`
    : sql``;
  // Only child workflows have parent columns (R43): written only by a batch of children, so
  // the common statement stays as it is.
  const parents = workflows.some((row) => row.parent !== undefined);
  const parentOf = <Value extends ArrayElement>(pick: (link: NewChildLink) => Value) =>
    arrayLiteral(workflows.map((row) => (row.parent === undefined ? null : pick(row.parent))));
  const parentColumns = parents
    ? sql`, parent_workflow_id, parent_task_id, child_index, root_workflow_id, depth, detached`
    : sql``;
  const parentValues = parents
    ? sql`,
        (${parentOf((link) => link.workflowId)}::uuid[])[v.position],
        (${parentOf((link) => link.taskId)}::uuid[])[v.position],
        (${parentOf((link) => link.index)}::integer[])[v.position],
        (${parentOf((link) => link.rootId)}::uuid[])[v.position],
        coalesce((${parentOf((link) => link.depth)}::smallint[])[v.position], 0),
        coalesce((${parentOf((link) => link.detached)}::boolean[])[v.position], false)`
    : sql``;
  // Only a batch submitted in a span has trace contexts (R57): the common statement stays.
  const traced = workflows.some((row) => (row.traceContext ?? null) !== null);
  const traceColumn = traced ? sql`, trace_context` : sql``;
  const traceValue = traced
    ? sql`,
        (${arrayLiteral(workflows.map((row) => (row.traceContext == null ? null : JSON.stringify(row.traceContext))))}::jsonb[])[v.position]`
    : sql``;
  // An edge's detail often names its row (a child's index, a root's run time): sent per row,
  // beside the positions, and only by a batch that has one. As a column of distinct edges,
  // a batch of children made as many edges as rows, and each row's subscript into a text
  // array walks it from its start: quadratic in the batch.
  const withDetails = log.some((row) => row.detail !== null);
  const details = withDetails
    ? sql`, ${arrayLiteral(log.map((row) => (row.detail === null ? null : JSON.stringify(row.detail))))}::text[]`
    : sql``;
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
      a.attempt === b.attempt,
  );
  const attributes = attributeInsertParts(workflows);
  const column = <Row>(kinds: DistinctRows<Row>, pick: (row: Row) => ArrayElement) =>
    arrayLiteral(kinds.values.map(pick));
  // Only a batch with a prioritised task writes the priority column (R49); the others leave
  // its default, so the common statement stays as it is.
  const prioritised = tasks.some((task) => task.priority !== 0);
  const priorityColumn = prioritised ? sql`, priority` : sql``;
  const priorityValue = prioritised ? sql`, t.priority` : sql``;
  const priorityField = prioritised
    ? sql`,
          (${column(taskKinds, (task) => task.priority)}::integer[])[v.kind] as priority`
    : sql``;
  // Only a batch with a keyed task writes the concurrency columns (R50), per task: keys differ
  // per workflow.
  const keyed = tasks.some((task) => task.concurrency !== null);
  const slotOf = (pick: (slot: TaskConcurrency) => ArrayElement) =>
    arrayLiteral(tasks.map((task) => (task.concurrency === null ? null : pick(task.concurrency))));
  const keyColumns = keyed ? sql`, concurrency_group, concurrency_key, concurrency_limit` : sql``;
  const keyValues = keyed
    ? sql`, t.concurrency_group, t.concurrency_key, t.concurrency_limit`
    : sql``;
  const keyFields = keyed
    ? sql`,
          (${slotOf((slot) => slot.group)}::text[])[v.position] as concurrency_group,
          (${slotOf((slot) => slot.key)}::text[])[v.position] as concurrency_key,
          (${slotOf((slot) => slot.limit)}::integer[])[v.position] as concurrency_limit`
    : sql``;
  // Likewise the rate columns (R51); a key of '' is the name's one bucket.
  const rated = tasks.some((task) => task.rate !== null);
  const rateOf = (pick: (rate: TaskRate) => ArrayElement) =>
    arrayLiteral(tasks.map((task) => (task.rate === null ? null : pick(task.rate))));
  const rateColumns = rated ? sql`, rate_name, rate_key, rate_cost` : sql``;
  const rateValues = rated ? sql`, t.rate_name, t.rate_key, t.rate_cost` : sql``;
  const rateFields = rated
    ? sql`,
          (${rateOf((rate) => rate.name)}::text[])[v.position] as rate_name,
          (${rateOf((rate) => rate.key ?? '')}::text[])[v.position] as rate_key,
          (${rateOf((rate) => rate.cost)}::integer[])[v.position] as rate_cost`
    : sql``;
  return sql<{ skipped: string[] | null; refused_at_ms?: string | null }>`
    ${preparedSql}
    with clock as materialized (
      -- Database time once per statement: causeway_now() per row costs microseconds each.
      select causeway_now() as at
    ),
    ${runAt.check}
    id as materialized (
      select ${arrayLiteral(workflows.map((row) => row.id))}::uuid[] as workflow,
        ${arrayLiteral(tasks.map((task) => task.id))}::uuid[] as task
    ),
    workflow_insert as (
      insert into causeway_workflows (id, name, state, input, idempotency_key, steps, version,
        created_at, updated_at${parentColumns}${traceColumn}${attributes.column})
      select (select workflow from id)[v.position],
        (${column(workflowKinds, (row) => row.name)}::text[])[v.kind],
        (${column(workflowKinds, (row) => row.state)}::text[])[v.kind],
        (${`[${workflows.map((row) => row.inputJson).join(',')}]`}::jsonb)->(v.position::integer - 1),
        v.idempotency_key,
        (${column(workflowKinds, (row) => row.steps)}::text[])[v.kind],
        (${column(workflowKinds, (row) => row.version)}::text[])[v.kind],
        (select at from clock), (select at from clock)${parentValues}${traceValue}${attributes.value}
      -- The inputs travel as one JSON array (their texts joined), read back by position:
      -- as a text array each needed its quotes escaped.
      from unnest(
        ${arrayLiteral(workflowKinds.positions)}::integer[],
        ${arrayLiteral(workflows.map((row) => row.idempotencyKey))}::text[]
      ) with ordinality as v(kind, idempotency_key, position)
      ${runAt.gate}
      order by v.position
      on conflict (name, idempotency_key) where idempotency_key is not null do nothing
      returning id${attributes.returning}
    ),
    ${attributes.insert}
    task_insert as (
      insert into causeway_tasks (id, workflow_id, step, queue, state, max_attempts, run_at,
        deadline_at, event_name, event_key, wait_since, wait_timeout_at, created_at, updated_at${errorColumns}${priorityColumn}${keyColumns}${rateColumns})
      select t.id, t.workflow_id, t.step, t.queue, t.state, t.max_attempts,
        coalesce(t.run_from, (select at from clock)) + t.run_ms * interval '1 millisecond',
        (select at from clock) + t.deadline_ms * interval '1 millisecond',
        t.event_name, t.event_key,
        case when t.event_name is not null then (select at from clock) end,
        (select at from clock) + t.wait_ms * interval '1 millisecond',
        (select at from clock), (select at from clock)${errorValues}${priorityValue}${keyValues}${rateValues}
      from (
        select (select task from id)[v.position] as id,
          (select workflow from id)[v.workflow] as workflow_id, v.position,
          (${column(taskKinds, (task) => task.step)}::text[])[v.kind] as step,
          (${column(taskKinds, (task) => task.queue)}::text[])[v.kind] as queue,
          (${column(taskKinds, (task) => task.state)}::text[])[v.kind] as state,
          (${column(taskKinds, (task) => task.maxAttempts)}::integer[])[v.kind] as max_attempts,
          (${column(taskKinds, (task) => task.runInMs)}::bigint[])[v.kind] as run_ms,
          (${column(taskKinds, (task) => task.runFrom?.toISOString() ?? null)}::timestamptz[])[v.kind] as run_from,
          (${column(taskKinds, (task) => task.deadlineInMs)}::bigint[])[v.kind] as deadline_ms,
          (${column(taskKinds, (task) => task.wait?.eventName ?? null)}::text[])[v.kind] as event_name,
          (${column(taskKinds, (task) => task.wait?.timeoutMs ?? null)}::bigint[])[v.kind] as wait_ms,
          (${eventKeys})[v.position] as event_key${errorFields}${priorityField}${keyFields}${rateFields}
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
      select (select workflow from id)[v.workflow], (select task from id)[v.task],
        (${column(edges, (row) => row.step)}::text[])[v.edge],
        (${column(edges, (row) => row.from)}::text[])[v.edge],
        (${column(edges, (row) => row.to)}::text[])[v.edge],
        (${column(edges, (row) => row.reason)}::text[])[v.edge],
        (${column(edges, (row) => row.errorCategory)}::text[])[v.edge],
        (${column(edges, (row) => row.errorSummary)}::text[])[v.edge],
        (${column(edges, (row) => row.actor)}::text[])[v.edge],
        (${column(edges, (row) => row.attempt)}::integer[])[v.edge],
        (select at from clock), ${withDetails ? sql`v.detail::jsonb` : sql`null::jsonb`}
      -- In their order, sorted before their columns are looked up: thousands of narrow rows
      -- sort in memory, where as many full rows spilled to disk. A subquery with ORDER BY is
      -- never merged into its query, so the rows are inserted in that order.
      from (
        select v.* from unnest(
          ${arrayLiteral(log.map((row) => positionOf(workflowPosition, row.workflowId)))}::integer[],
          ${arrayLiteral(log.map((row) => (row.taskId === null ? null : positionOf(taskPosition, row.taskId))))}::integer[],
          ${arrayLiteral(edges.positions)}::integer[]${details}
        ) with ordinality as v(workflow, task, edge, ${withDetails ? sql`detail, ` : sql``}position)
        where (select workflow from id)[v.workflow] in (select id from workflow_insert)
        order by v.position
      ) as v
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
      ${runAt.answer}
      (select count(*) from task_insert) as tasks, (select count(*) from log_insert) as log,
      (select count(*) from wake) as wake, (select count(*) from announce) as announce
    from (select count(*) from workflow_insert) as inserted`;
}

/**
 * The statement's parts that check a `runAt` against database time, in whole milliseconds as
 * the refusal's message compares them (`submitRunAtProblem`). A submit without one sends the
 * statement without them, so the common submit pays nothing for the check.
 */
function runAtAdmission(runAtMs: number | null): {
  readonly check: RawBuilder<unknown>;
  readonly gate: RawBuilder<unknown>;
  readonly answer: RawBuilder<unknown>;
} {
  if (runAtMs === null) return { check: sql``, gate: sql``, answer: sql`` };
  const { pastToleranceMs, maxMs } = submitDelayLimits;
  return {
    check: sql`admission as materialized (
      select ${runAtMs}::bigint between now_ms - ${sql.lit(pastToleranceMs)}
          and now_ms + ${sql.lit(maxMs)} as admitted, now_ms
      from (select floor(extract(epoch from at) * 1000)::bigint as now_ms from clock) as c
    ),`,
    gate: sql`where (select admitted from admission)`,
    answer: sql`(select now_ms from admission where not admitted) as refused_at_ms,`,
  };
}

/** The rows of a submission (`submissionInsert`). */
export interface SubmissionRows {
  readonly workflows: readonly NewWorkflowRow[];
  readonly tasks: readonly NewSubmittedTask[];
  readonly transitions: readonly NewTransitionRow[];
  /** A submit's `runAt` (epoch ms), admitted within `submitDelayLimits` of the database's now. */
  readonly runAtMs: number | null;
}

/** What `submissionInsert` did. */
export interface SubmissionOutcome {
  /** The workflows it did not insert because their (name, key) existed. */
  readonly skipped: ReadonlySet<string>;
  /** The database time (epoch ms) at which it refused the `runAt`, inserting nothing; or null. */
  readonly refusedAtMs: number | null;
}
