import type {
  Blocker,
  RateLimit,
  StaleResult,
  Transition,
  WorkflowDefinition,
  WorkflowState,
} from '@causeway/workflow';
import type { WorkflowAttributes } from '@causeway/workflow/internal';
import type { Kysely } from 'kysely';
import { staleResultListByWorkflows } from './db/attempts/stale-result-list';
import { eventListByTaskIds, type StoredEvent } from './db/events/event-queries';
import { type MetricsSnapshot, metricsSnapshotRead } from './db/metrics/metrics-snapshot';
import { type TransitionEdge, transitionEdgesRange } from './db/metrics/transition-edges';
import { outboxListByTasks } from './db/outbox/outbox-queries';
import {
  onlyUuids,
  taskListByIds,
  taskListByWorkflowIds,
  transitionHorizonProbe,
  transitionListByTaskIds,
  transitionListByWorkflowIds,
  transitionListRange,
  workflowListByIds,
} from './db/reads/read-queries';
import {
  type WorkflowKey,
  type WorkflowOrder,
  workflowCountRead,
  workflowPageRead,
} from './db/reads/workflow-page';
import { type WalPosition, walPositionRead } from './db/replication/wal-position';
import type { TaskRecord, WorkflowRecord } from './db/rows';
import type { CausewayDatabase } from './db/schema';
import { readBlockers } from './runtime/blockers/workflow-blockers';
import { type ExplanationFacts, readExplanationFacts } from './runtime/reads/explanation-facts';
import { createTreeReads, type TreeReads } from './runtime/reads/tree-reads';
import { listWorkers, type WorkerView } from './runtime/registry/worker-views';

export type {
  ConcurrencySlots,
  EventWait,
  LeaseHolder,
  MetricsSnapshot,
  OutboxBacklog,
  QueueSlots,
  RateLimitSpend,
  ReadyQueue,
  ScheduleLag,
  TaskStateCount,
} from './db/metrics/metrics-snapshot';
export type { TransitionEdge } from './db/metrics/transition-edges';
export type { WorkflowKey, WorkflowOrder } from './db/reads/workflow-page';
export type { WalPosition } from './db/replication/wal-position';
export type { TaskRecord, WorkflowRecord } from './db/rows';
export type { CausewayDatabase } from './db/schema';
export { type ExplanationFacts, explainWithFacts } from './runtime/reads/explanation-facts';
export {
  type ChildKey,
  type ChildPageRow,
  type ChildrenRequest,
  type ChildWorkflowFilter,
  type ChildWorkflowPage,
  type StepChildCounts,
  type TreeReads,
  workflowResult,
} from './runtime/reads/tree-reads';
export type { ParentView } from './runtime/reads/workflow-reads';

export interface WorkflowFilter {
  /** Any of these states; absent means any state. */
  readonly states?: readonly WorkflowState[];
  readonly name?: string;
  /** Children of this workflow, any step (R48). */
  readonly parentId?: string;
  /** Every workflow below this root. */
  readonly rootId?: string;
  /** Workflows with every one of these attributes, types included (R55). */
  readonly attributes?: WorkflowAttributes;
}

export interface WorkflowPage {
  /** Each workflow with its keyset position, to build cursors from. */
  readonly rows: readonly { readonly workflow: WorkflowRecord; readonly key: WorkflowKey }[];
  readonly hasMore: boolean;
}

/**
 * Reads for query layers (the GraphQL API): pages, counts and batches by id, so a page of
 * workflows with their tasks and transitions costs a fixed number of queries. Every method is
 * one SQL statement (or none, for empty input); nothing locks.
 */
export interface ReadModel extends TreeReads {
  /**
   * Workflows in (created_at, id) order after `after`, at most `limit`: newest first unless
   * `order` says otherwise. `after` is a key of a page read in the same order.
   */
  workflowPage(
    filter: WorkflowFilter,
    page: {
      readonly after?: WorkflowKey | null;
      readonly limit: number;
      readonly order?: WorkflowOrder;
    },
  ): Promise<WorkflowPage>;
  /** How many workflows match, counting no further than `atMost` (exact below it). */
  workflowCount(filter: WorkflowFilter, atMost: number): Promise<number>;
  workflowsByIds(ids: readonly string[]): Promise<ReadonlyMap<string, WorkflowRecord>>;
  tasksByIds(ids: readonly string[]): Promise<ReadonlyMap<string, TaskRecord>>;
  /** Each workflow's tasks (creation order); workflows without tasks map to nothing. */
  tasksByWorkflowIds(ids: readonly string[]): Promise<ReadonlyMap<string, readonly TaskRecord[]>>;
  /** Each workflow's log rows, workflow and task rows, in log (id) order. */
  transitionsByWorkflowIds(
    ids: readonly string[],
  ): Promise<ReadonlyMap<string, readonly Transition[]>>;
  transitionsByTaskIds(ids: readonly string[]): Promise<ReadonlyMap<string, readonly Transition[]>>;
  /**
   * Each workflow's refused late results (R56), which with its log make its tasks' attempts
   * (`taskAttempts`); workflows without any map to nothing.
   */
  staleResultsByWorkflowIds(
    ids: readonly string[],
  ): Promise<ReadonlyMap<string, readonly StaleResult[]>>;
  /** Each task's outbox messages (R22), oldest first. */
  outboxByTaskIds(
    ids: readonly string[],
  ): Promise<ReadonlyMap<string, readonly OutboxMessageRecord[]>>;
  /** Each task's delivered events (R38), oldest delivery first. */
  eventsByTaskIds(ids: readonly string[]): Promise<ReadonlyMap<string, readonly StoredEvent[]>>;
  /** Log rows with after < id <= upTo in id order, optionally of one workflow. */
  transitionRange(range: {
    readonly after: bigint;
    readonly upTo: bigint;
    readonly workflowId?: string;
    readonly limit: number;
  }): Promise<readonly Transition[]>;
  /**
   * A reader of the whole log in id order that only ever returns rows that are final: no
   * row with a smaller id can commit after it was returned (see `TransitionLogReader`).
   */
  transitionLogReader(): TransitionLogReader;
  /** The same reader, whose rows are edges with the time spent in the state they leave. */
  transitionEdgeReader(): TransitionLogReader<TransitionEdge>;
  /**
   * The live gauges of the metrics, read through partial indexes only (one snapshot), with the
   * spend of `rateLimits` (the engine's declared limits, R51).
   */
  metricsSnapshot(rateLimits?: readonly RateLimit[]): Promise<MetricsSnapshot>;
  /**
   * Each workflow's blockers (`engine.blockers`), decided with the step policies of
   * `definitions`: a few indexed statements in one snapshot for any number of workflows.
   */
  blockersByWorkflowIds(
    ids: readonly string[],
    definitions: ReadonlyMap<string, WorkflowDefinition>,
    /** The engine's declared rate limits (R51): without them a spent key's limit is unknown. */
    rateLimits?: readonly RateLimit[],
  ): Promise<ReadonlyMap<string, readonly Blocker[]>>;
  /**
   * What each workflow's explanation says beside its log (`explainWithFacts`), from its tasks:
   * a statement per kind of fact some task needs, none for finished workflows. `rateLimits`
   * are the engine's declared limits (R51).
   */
  explanationFactsByWorkflowIds(
    tasksByWorkflow: ReadonlyMap<string, readonly TaskRecord[]>,
    rateLimits?: readonly RateLimit[],
  ): Promise<ReadonlyMap<string, ExplanationFacts>>;
  /** The worker registry (`engine.workers`). */
  workers(options?: { readonly includeStale?: boolean }): Promise<WorkerView[]>;
  /** Where this server stands in the WAL: insert position on a primary, replay on a replica. */
  walPosition(): Promise<WalPosition>;
}

/** An outbox message of a task, as queries show it ("submitted, sending" while pending). */
export interface OutboxMessageRecord {
  readonly taskId: string;
  readonly id: string;
  readonly channel: string;
  readonly state: string;
  readonly attempts: number;
  readonly lastError: string | null;
}

export function createReadModel(db: Kysely<CausewayDatabase>): ReadModel {
  return {
    ...createTreeReads(db),
    workflowPage: (filter, page) =>
      workflowPageRead(db, {
        filter,
        order: page.order ?? 'newest_first',
        after: page.after ?? null,
        limit: positiveLimit(page.limit),
      }),
    workflowCount: (filter, atMost) => workflowCountRead(db, filter, positiveLimit(atMost)),
    async workflowsByIds(ids) {
      return new Map((await workflowListByIds(db, ids)).map((row) => [row.id, row]));
    },
    async tasksByIds(ids) {
      return new Map((await taskListByIds(db, ids)).map((row) => [row.id, row]));
    },
    async tasksByWorkflowIds(ids) {
      return groupBy(await taskListByWorkflowIds(db, ids), (row) => row.workflowId);
    },
    async transitionsByWorkflowIds(ids) {
      return groupBy(await transitionListByWorkflowIds(db, ids), (row) => row.workflowId);
    },
    async transitionsByTaskIds(ids) {
      return groupBy(await transitionListByTaskIds(db, ids), (row) => row.taskId as string);
    },
    async staleResultsByWorkflowIds(ids) {
      return groupBy(await staleResultListByWorkflows(db, onlyUuids(ids)), (row) => row.workflowId);
    },
    async outboxByTaskIds(ids) {
      return groupBy(await outboxListByTasks(db, ids), (row) => row.taskId);
    },
    async eventsByTaskIds(ids) {
      const groups = new Map<string, StoredEvent[]>();
      for (const { taskId, ...event } of await eventListByTaskIds(db, onlyUuids(ids))) {
        const group = groups.get(taskId);
        if (group === undefined) groups.set(taskId, [event]);
        else group.push(event);
      }
      return groups;
    },
    transitionRange: (range) =>
      transitionListRange(db, { ...range, limit: positiveLimit(range.limit) }),
    transitionLogReader: () => new TransitionLogReader(db, transitionListRange),
    transitionEdgeReader: () => new TransitionLogReader(db, transitionEdgesRange),
    metricsSnapshot: (rateLimits) => metricsSnapshotRead(db, rateLimits),
    blockersByWorkflowIds: (ids, definitions, rateLimits) =>
      readBlockers(db, definitions, onlyUuids(ids), rateLimits),
    explanationFactsByWorkflowIds: (tasksByWorkflow, rateLimits = []) =>
      readExplanationFacts(db, tasksByWorkflow, rateLimits),
    workers: (options) => listWorkers(db, options),
    walPosition: () => walPositionRead(db),
  };
}

/**
 * Reads the transition log in id order, returning a row only once it is final.
 *
 * Identity ids are handed out before commit, so ids do not commit in order: a transaction
 * holding id 19 may commit after one holding id 20. A reader that returned 20 and resumed
 * "after 20" would skip 19 forever. Filtering on the writer's own transaction id
 * (`xact_id < pg_snapshot_xmin(pg_current_snapshot())`) is not enough: a transaction whose
 * xid is younger can hold the older id (xids are assigned at a transaction's first write or
 * lock, ids at its insert), and a running transaction above the snapshot's xmax (the latest
 * completed xid + 1) does not hold xmin back at all.
 *
 * What is enough: the identity sequence's last value L, read at time t, bounds every id handed
 * out before t. A transaction that appends transitions already has an xid when it takes its
 * id (every engine write path locks or inserts a row first), so the holder of any id <= L got
 * its xid before t, below a transaction id B assigned after t. Once a later snapshot's xmin
 * reaches B, all of them have finished: every id <= L is committed or never will be. The
 * reader keeps such (L, B) pairs and releases rows up to the highest L whose B was passed.
 * Cost: one xid per read that finds new ids, and a delay while an older write transaction
 * (of any database of the server: xids are server-wide) is still open.
 * Assumes the identity sequence hands out ids one at a time (CACHE 1, PostgreSQL's default).
 */
export class TransitionLogReader<Row extends { readonly id: string } = Transition> {
  /** Rows up to here have been returned (or do not exist). */
  private cursorId = 0n;
  /** Ids up to here are final. */
  private finalId = 0n;
  private pending: { lastId: bigint; bound: bigint }[] = [];
  private started = false;

  constructor(
    private readonly db: Kysely<CausewayDatabase>,
    /** The rows of a final id range, in id order (the log's rows, or a view of them). */
    private readonly rangeRead: (
      db: Kysely<CausewayDatabase>,
      range: { after: bigint; upTo: bigint; limit: number },
    ) => Promise<readonly Row[]>,
  ) {}

  /** The id up to which every row has been returned: a resume point for new readers. */
  get position(): bigint {
    return this.cursorId;
  }

  /** True while some ids handed out are not final yet (read again soon). */
  get waiting(): boolean {
    return this.pending.length > 0;
  }

  /**
   * Starts at the log's current end: rows already there are not returned. Resolves once every
   * id handed out before the call is final, so `position` is a point no row can slip under.
   */
  async start(options: { signal?: AbortSignal; pollMs?: number } = {}): Promise<void> {
    const first = await transitionHorizonProbe(this.db, -1n);
    const bound = first.bound as bigint;
    for (;;) {
      const { xmin } = await transitionHorizonProbe(this.db, maxBigint);
      if (xmin >= bound) break;
      options.signal?.throwIfAborted();
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 10));
    }
    this.cursorId = first.lastId;
    this.finalId = first.lastId;
    this.started = true;
  }

  /** The next final rows after `position`, in id order, at most `limit`. */
  async read(limit: number): Promise<readonly Row[]> {
    if (!this.started) throw new Error('TransitionLogReader.read() before start()');
    const known = this.pending.at(-1)?.lastId ?? this.finalId;
    const probe = await transitionHorizonProbe(this.db, known);
    const still: { lastId: bigint; bound: bigint }[] = [];
    for (const pair of this.pending) {
      if (pair.bound <= probe.xmin) {
        if (pair.lastId > this.finalId) this.finalId = pair.lastId;
      } else if (pair.lastId > this.finalId) {
        still.push(pair);
      }
    }
    if (probe.bound !== null) still.push({ lastId: probe.lastId, bound: probe.bound });
    // Bounded while a long transaction holds xmin back: dropping a middle pair only delays
    // finality (a later pair covers its ids), it never releases a row early.
    if (still.length > 256) still.splice(1, still.length - 256);
    this.pending = still;
    if (this.finalId <= this.cursorId) return [];
    const rows = await this.rangeRead(this.db, {
      after: this.cursorId,
      upTo: this.finalId,
      limit: positiveLimit(limit),
    });
    const last = rows.at(-1);
    // Fewer rows than asked: everything up to finalId is returned (the rest are gaps).
    this.cursorId = rows.length < limit || last === undefined ? this.finalId : BigInt(last.id);
    return rows;
  }
}

const maxBigint = 9_223_372_036_854_775_807n;

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const id = key(row);
    const group = groups.get(id);
    if (group === undefined) groups.set(id, [row]);
    else group.push(row);
  }
  return groups;
}

function positiveLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  }
  return limit;
}
