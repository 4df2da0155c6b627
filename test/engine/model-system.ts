/**
 * The real side of the engine model test: one engine on the test database, driven only
 * through deterministic entry points (no background worker), and the reads the test compares
 * with the model after every command.
 *
 * Randomness: the engine's own context draws jitter from Math.random, so every path that may
 * draw it (claims and settles through `applyEvents`, the sweeper, receipts) runs with an
 * EngineContext built here whose `random` returns the current command's jitter — a number
 * fast-check chose, constant within a command. The model gets the same constant, so backoff
 * `run_at` values are compared exactly, whatever order the engine draws them in.
 *
 * Reads are plain SQL in the tables' own column names, never the engine's row mappers or its
 * Kysely schema, so a column the engine maps or writes wrongly shows in the comparison.
 */
import type { Engine } from '@causeway/engine';
import { type TaskState, type WorkflowState, workflowRegistry } from '@causeway/workflow/internal';
import { type QueryExecutorProvider, sql } from 'kysely';
import { pino } from 'pino';
import { childStartsWrite } from '../../packages/engine/src/runtime/children/child-starts';
import type { EngineContext } from '../../packages/engine/src/runtime/context';
import { applyEvents } from '../../packages/engine/src/runtime/decision/apply-events';
import type { ApplyContext } from '../../packages/engine/src/runtime/decision/event-request';
import { Notifier } from '../../packages/engine/src/runtime/notifier';
import { recordReceipt } from '../../packages/engine/src/runtime/operations/operations';
import { WorkerRegistry } from '../../packages/engine/src/runtime/registry/worker-registry';
import { Sweeper } from '../../packages/engine/src/runtime/sweep/sweeper';
import { HandlerRunObservers } from '../../packages/engine/src/runtime/worker/handler-runs';
import type { ChildIdSource, ChildIds } from './model-children-host';
import { ChildFinder } from './model-children-ids';
import type { LogRow } from './model-state';
import { leaseMs, modelEngineWorkflows, sweeperHolder } from './model-workflows';

/**
 * A sweep is only compared when no sweeper deadline (lease expiry, queued deadline, receipt
 * deadline) falls within this long after the time read before it: the sweeper lists due work
 * with one `now` and applies it with a later one, and this keeps both on the same side of
 * every deadline. The clock is moved past such deadlines first.
 */
export const sweepGuardMs = 5_000;

/** Database time between runs, so no two runs' rows share a millisecond. */
const runGapMs = 3_600_000;

/** What the runs of one test share: the engine, the seeded context, the clock offset. */
export interface Shared {
  readonly url: string;
  readonly engine: Engine;
  readonly context: EngineContext;
  /** The jitter the context's `random` returns (set by every command). */
  readonly jitter: { value: number };
  /** causeway_clock.offset_ms; only ever grows, so runs never overlap in database time. */
  offsetMs: number;
  runs: number;
}

export function createShared(url: string, engine: Engine): Shared {
  const logger = pino({ level: process.env.CAUSEWAY_TEST_LOG === '1' ? 'debug' : 'silent' });
  const jitter = { value: 0 };
  const definitions = workflowRegistry(modelEngineWorkflows);
  // As the engine wires it: a step's children are written in the transaction of its edge.
  const apply: ApplyContext = {
    definitions,
    leaseMs,
    random: () => jitter.value,
    writeChildren: (tx, starts) => childStartsWrite(tx, apply, starts),
  };
  return {
    url,
    engine,
    jitter,
    offsetMs: 0,
    runs: 0,
    context: {
      db: engine.db,
      definitions,
      apply,
      holder: sweeperHolder,
      rootLogger: logger,
      logger,
      leaseMs,
      sweepIntervalMs: 1_000,
      pollIntervalMs: 1_000,
      // Never subscribed to, so it never connects.
      notifier: new Notifier(url, logger, 'causeway_wakeup'),
      // Never joined: the model runs no worker.
      registry: new WorkerRegistry(engine.db, sweeperHolder, definitions, logger, {
        heartbeatMs: 5_000,
        ageOutMs: 30_000,
        appVersion: null,
      }),
      channels: new Map(),
      handlerRuns: new HandlerRunObservers(),
    },
  };
}

/** A transition row as read back (the compared columns plus its database time). */
export interface DbRow extends LogRow {
  readonly at: Date;
}

/** A task row as read back: the compared columns, checkpoints as their sorted names. */
export type TaskRow = Record<string, unknown> & {
  readonly id: string;
  readonly workflow_id: string;
  readonly state: TaskState;
};

/** The engine's Kysely instance or one of its transactions: plain SQL runs on either. */
type Executor = QueryExecutorProvider;

/** Database time (R11: causeway_now(), with the test offset). */
export async function databaseNow(db: Executor): Promise<Date> {
  const { rows } = await sql<{ now: Date }>`select causeway_now() as now`.execute(db);
  return (rows[0] as { now: Date }).now;
}

async function setClockOffset(db: Executor, offsetMs: number): Promise<void> {
  await sql`update causeway_clock set offset_ms = ${offsetMs}`.execute(db);
}

/** The task rows of `workflowIds`, by id. */
export async function taskRows(db: Executor, workflowIds: readonly string[]): Promise<TaskRow[]> {
  if (workflowIds.length === 0) return [];
  const { rows } = await sql<TaskRow>`
    select id, workflow_id, step, queue, max_attempts, state, attempt, replay_count,
      effect_started, run_at, deadline_at, last_error_category, last_error, lease_holder,
      lease_epoch::integer as lease_epoch, lease_expires_at, receipt_id, receipt_deadline_at,
      array(select jsonb_object_keys(checkpoints)) as checkpoints, output, event_name, event_key,
      wait_since, wait_timeout_at, children_total, children_succeeded, children_failed,
      children_allowed_failures, children_output
    from causeway_tasks where workflow_id = any(${[...workflowIds]}::uuid[])
    order by id`.execute(db);
  return rows.map((row) => ({ ...row, checkpoints: [...(row.checkpoints as string[])].sort() }));
}

/**
 * The public read's names (getWorkflow, in the public surfaces) of the columns the test compares, so its answer
 * can be held against the same expectations as the plain SQL reads.
 */
const taskFieldOfColumn = {
  id: 'id',
  workflow_id: 'workflowId',
  step: 'step',
  queue: 'queue',
  max_attempts: 'maxAttempts',
  state: 'state',
  attempt: 'attempt',
  replay_count: 'replayCount',
  effect_started: 'effectStarted',
  run_at: 'runAt',
  deadline_at: 'deadlineAt',
  last_error_category: 'lastErrorCategory',
  last_error: 'lastError',
  lease_holder: 'leaseHolder',
  lease_epoch: 'leaseEpoch',
  lease_expires_at: 'leaseExpiresAt',
  receipt_id: 'receiptId',
  receipt_deadline_at: 'receiptDeadlineAt',
  checkpoints: 'checkpoints',
  output: 'output',
  event_name: 'eventName',
  event_key: 'eventKey',
  wait_since: 'waitSince',
  wait_timeout_at: 'waitTimeoutAt',
} as const;
const transitionFieldOfColumn = {
  workflow_id: 'workflowId',
  task_id: 'taskId',
  step: 'step',
  from_state: 'from',
  to_state: 'to',
  reason: 'reason',
  error_category: 'errorCategory',
  error_summary: 'errorSummary',
  actor: 'actor',
  attempt: 'attempt',
  detail: 'detail',
} as const;

/** A public object's fields re-keyed by the columns they show. */
function byColumn(value: object, fieldOfColumn: Readonly<Record<string, string>>) {
  const fields = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(fieldOfColumn).map(([column, field]) => [column, fields[field]]),
  );
}

/** What getWorkflow says of a workflow, in column names: its state, tasks and log. */
export interface PublicView {
  readonly state: string;
  readonly tasks: readonly Record<string, unknown>[];
  readonly log: readonly Record<string, unknown>[];
}

/** One fast-check run: its workflows, where its log rows start, its start time. */
export class RealSystem implements ChildIdSource {
  readonly workflowIds = new Set<string>();
  /** The child workflows the engine started for this run's steps (R43). */
  readonly children = new ChildFinder();
  readonly runId: string;
  private watermark = '0';

  private constructor(
    readonly shared: Shared,
    readonly runStart: Date,
  ) {
    this.runId = `run-${shared.runs}`;
  }

  /** Starts a run an hour (of database time) after the previous one. */
  static async start(shared: Shared): Promise<RealSystem> {
    shared.runs += 1;
    shared.offsetMs += runGapMs;
    await setClockOffset(shared.engine.db, shared.offsetMs);
    const system = new RealSystem(shared, await databaseNow(shared.engine.db));
    system.watermark = await system.lastTransitionId();
    return system;
  }

  get engine(): Engine {
    return this.shared.engine;
  }

  get db() {
    return this.shared.engine.db;
  }

  get context(): EngineContext {
    return this.shared.context;
  }

  now(): Promise<Date> {
    return databaseNow(this.db);
  }

  /** Moves database time forward to at least `target` (never backwards). */
  async advanceTo(target: number): Promise<void> {
    const delta = target - (await this.now()).getTime();
    if (delta <= 0) return;
    this.shared.offsetMs += delta;
    await setClockOffset(this.db, this.shared.offsetMs);
  }

  /**
   * One sweeper pass (the engine's Sweeper class with the seeded context), after moving the
   * clock past any of `deadlines` that would fall inside the guard window. Returns the time
   * read just before the pass; every deadline is either before it or more than the guard
   * after it.
   */
  async sweep(deadlines: () => readonly number[]): Promise<Date> {
    for (;;) {
      const now = await this.now();
      const soon = deadlines().filter(
        (at) => at >= now.getTime() && at <= now.getTime() + sweepGuardMs,
      );
      if (soon.length === 0) {
        await new Sweeper(this.context).sweep();
        return now;
      }
      await this.advanceTo(Math.max(...soon) + 1);
    }
  }

  /** A receipt through the engine's operation, with the seeded context (R23). */
  recordReceipt(taskId: string, outcome: Parameters<typeof recordReceipt>[2]) {
    return recordReceipt(this.context, taskId, outcome);
  }

  /** The ids of the child the engine started for a step's index (the model's `ChildIdSource`). */
  take(parentTaskId: string, index: number): ChildIds {
    return this.children.take(parentTaskId, index);
  }

  /** The log rows this run's workflows got since the last call, in log order. */
  async takeRows(): Promise<DbRow[]> {
    await this.children.find(this.db, this.workflowIds);
    const ids = [...this.workflowIds];
    if (ids.length === 0) return [];
    const { rows } = await sql<DbRow & { id: string }>`
      select id::text as id, workflow_id, task_id, step, from_state, to_state, reason,
        error_category, error_summary, actor, attempt, at, detail
      from causeway_transitions
      where id > ${this.watermark}::bigint and workflow_id = any(${ids}::uuid[])
      -- The table's id, not the text alias of the same name (text order puts 10 before 9).
      order by causeway_transitions.id`.execute(this.db);
    // Only this run's rows are ever read, so the last one read is the mark for the next read.
    const last = rows[rows.length - 1];
    if (last !== undefined) this.watermark = last.id;
    return rows.map(({ id: _id, ...row }) => row);
  }

  /** The engine's public read of a workflow (`getWorkflow` of the public surfaces), tasks in its order. */
  async publicView(workflowId: string): Promise<PublicView | undefined> {
    const view = await this.engine.getWorkflow(workflowId);
    if (view === undefined) return undefined;
    return {
      state: view.state,
      tasks: view.tasks.map((task) => ({
        ...byColumn(task, taskFieldOfColumn),
        checkpoints: Object.keys(task.checkpoints).sort(),
        children_total: task.children?.total ?? null,
        children_succeeded: task.children?.succeeded ?? null,
        children_failed: task.children?.failed ?? null,
        children_allowed_failures: task.children?.allowedFailures ?? null,
        children_output: task.children?.output ?? null,
      })),
      log: view.transitions.map((row) => byColumn(row, transitionFieldOfColumn)),
    };
  }

  tasks(): Promise<TaskRow[]> {
    return taskRows(this.db, [...this.workflowIds]);
  }

  async workflowStates(): Promise<Map<string, WorkflowState>> {
    const ids = [...this.workflowIds];
    if (ids.length === 0) return new Map();
    const { rows } = await sql<{ id: string; state: WorkflowState }>`
      select id, state from causeway_workflows where id = any(${ids}::uuid[])`.execute(this.db);
    return new Map(rows.map((row) => [row.id, row.state]));
  }

  /**
   * Leaves nothing of this run that a later run's claims, sweeps or events could see: cancels
   * the workflows with queued, leased or waiting tasks, confirms the cancels of leased tasks,
   * confirms awaited receipts. Dead, cancelled and pending tasks stay: nothing claims or sweeps
   * them, and later runs' bulk requeues only look at their own time range.
   */
  async cleanup(): Promise<void> {
    const visible: readonly TaskState[] = [
      'queued',
      'leased',
      'waiting',
      'cancel_requested',
      'awaiting_receipt',
      // Swept past its deadline (R46), or settled by a child a later run would see end.
      'awaiting_children',
    ];
    // A confirmed receipt may promote the next step, so go round until nothing is left.
    for (let round = 0; round < 5; round += 1) {
      const tasks = (await this.tasks()).filter((task) => visible.includes(task.state));
      if (tasks.length === 0) return;
      const toCancel = new Set(
        tasks
          .filter((task) =>
            ['queued', 'leased', 'waiting', 'awaiting_children'].includes(task.state),
          )
          .map((task) => task.workflow_id),
      );
      for (const workflowId of toCancel) await this.engine.cancelWorkflow(workflowId);
      for (const task of tasks) {
        if (task.state === 'awaiting_receipt') {
          await this.recordReceipt(task.id, { ok: true });
        } else if (
          (task.state === 'cancel_requested' || task.state === 'leased') &&
          // A step asked to cancel while awaiting children ends when they do (R46).
          task.lease_holder !== null
        ) {
          // (leased was just asked to stop by the workflow cancel above)
          const event = { type: 'boundary', actor: { kind: 'worker', name: 'cleanup' } } as const;
          await this.db
            .transaction()
            .execute((tx) => applyEvents(tx, this.context.apply, [{ taskId: task.id, event }]));
        }
      }
    }
    const left = (await this.tasks()).filter((task) => visible.includes(task.state));
    throw new Error(`cleanup left active tasks: ${left.map((task) => task.state).join(', ')}`);
  }

  private async lastTransitionId(): Promise<string> {
    const { rows } = await sql<{ id: string }>`
      select coalesce(max(id), 0)::text as id from causeway_transitions`.execute(this.db);
    return rows[0]?.id ?? '0';
  }
}
