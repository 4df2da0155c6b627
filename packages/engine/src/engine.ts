import {
  type Blocker,
  DefinitionError,
  type Explanation,
  rateLimitDeclarationProblems,
  type WorkflowDefinition,
  type WorkflowRegistry,
  withMapChildren,
  workflowRegistry,
} from '@causeway/workflow/internal';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { registerPool } from './db/direct';
import { migrateDirectly, migrateToLatest } from './db/migrate';
import { wakeupChannel } from './db/notify-channels';
import { usePreparedStatements } from './db/prepared-statements';
import type { CausewayDatabase } from './db/schema';
import type { EngineOptions } from './engine-options';
import { EngineError } from './errors';
import { newHolderId } from './holder';
import { defaultLogger, engineLogger } from './logger';
import { readBlockers } from './runtime/blockers/workflow-blockers';
import { applyContextOf } from './runtime/children/child-starts';
import {
  type ConcurrencyOperations,
  concurrencyOperationsOf,
} from './runtime/concurrency/concurrency-groups';
import type { EngineContext } from './runtime/context';
import {
  type EventToSend,
  type SendEventAnswer,
  type SendEventOptions,
  sendEvents,
} from './runtime/events/send-event';
import { Notifier } from './runtime/notifier';
import { oneStatementPaths } from './runtime/one-statement-paths';
import {
  assertUuid,
  cancelTask,
  cancelWorkflow,
  type ReceiptOutcome,
  type Requester,
  type RequeueRequest,
  recordReceipt,
  replayTask,
  requeueDead,
  type TaskAnswer,
  type WorkflowCancelAnswer,
} from './runtime/operations/operations';
import {
  type SubmitOptions,
  type SubmitRequest,
  type SubmitResult,
  submitMany,
} from './runtime/operations/submit';
import { type QueueOperations, queueOperationsOf } from './runtime/queues/queue-operations';
import { type RateLimitOperations, rateLimitOperationsOf } from './runtime/rate/rate-limit-states';
import {
  type ChildrenRequest,
  type ChildWorkflowPage,
  explainWorkflow,
  readChildren,
  readWorkflowView,
  type WorkflowView,
} from './runtime/reads/workflow-reads';
import { WorkerRegistry } from './runtime/registry/worker-registry';
import { listWorkers, type WorkerView } from './runtime/registry/worker-views';
import { type PurgeFinishedAnswer, purgeFinished } from './runtime/retention/purge-finished';
import type { PurgeFinishedRequest } from './runtime/retention/purge-request';
import { type RetentionRun, retentionRuns } from './runtime/retention/retention-runs';
import { engineScheduleContext } from './runtime/schedules/engine-schedules';
import {
  listSchedules,
  pauseOrResumeSchedule,
  type ScheduleAnswer,
  type ScheduleRequest,
  type ScheduleTriggerAnswer,
  type ScheduleView,
  triggerSchedule,
} from './runtime/schedules/schedule-operations';
import {
  runSchedulerPass,
  type ScheduledSubmission,
  Scheduler,
} from './runtime/schedules/scheduler';
import { Sweeper } from './runtime/sweep/sweeper';
import { outsideAnyTrace } from './runtime/tracing/trace-context';
import {
  type DefinitionVersionView,
  listDefinitionVersions,
} from './runtime/versions/definition-versions';
import { type HandlerRunListener, HandlerRunObservers } from './runtime/worker/handler-runs';
import { Worker, type WorkerHandle, type WorkerOptions } from './runtime/worker/worker';

export type { EngineOptions } from './engine-options';
export type { OutboxView, TaskView, WorkflowView } from './runtime/reads/workflow-reads';
export type { DefinitionVersionView } from './runtime/versions/definition-versions';

/** The queues (R53), concurrency groups (R50), rate limits (R51): `queues`, `rateLimits`, … */
export interface Engine extends QueueOperations, ConcurrencyOperations, RateLimitOperations {
  /** Applies pending schema migrations (numbered SQL files, under an advisory lock). */
  migrate(): Promise<readonly string[]>;
  submit(
    name: string,
    input: unknown,
    options?: SubmitOptions & { idempotencyKey?: string },
  ): Promise<SubmitResult>;
  submitMany(requests: readonly SubmitRequest[], options?: SubmitOptions): Promise<SubmitResult[]>;
  cancelWorkflow(workflowId: string, requester?: Requester): Promise<WorkflowCancelAnswer>;
  cancelTask(taskId: string, requester?: Requester): Promise<TaskAnswer>;
  replayTask(taskId: string, request: { operator: string; reason: string }): Promise<TaskAnswer>;
  requeueDead(request: RequeueRequest): Promise<TaskAnswer[]>;
  recordReceipt(taskId: string, outcome: ReceiptOutcome): Promise<TaskAnswer>;
  /**
   * Stores an event and completes every task waiting for it in the same transaction (R38);
   * kept for steps that start waiting later. Idempotent by `idempotencyKey`. `reason` (the
   * sender's words) is kept on the event and on the edges it completes.
   */
  sendEvent(
    name: string,
    key: string,
    payload: unknown,
    options?: SendEventOptions,
  ): Promise<SendEventAnswer>;
  /** Several events in one transaction, answered in order; one refused refuses them all. */
  sendEvents(
    events: readonly EventToSend[],
    options?: { readonly operator?: string },
  ): Promise<SendEventAnswer[]>;
  /** The workflow with its tasks, each with its transitions; undefined if unknown. */
  getWorkflow(workflowId: string): Promise<WorkflowView | undefined>;
  explain(workflowId: string): Promise<Explanation>;
  /** Its child workflows (R48), a page at a time in (step, index) order. */
  children(workflowId: string, request?: ChildrenRequest): Promise<ChildWorkflowPage>;
  /**
   * What blocks each non-terminal task of the workflow right now, in step order (issue 18);
   * undefined if the workflow is unknown. See docs/blockers.md for the codes and facts.
   */
  blockers(workflowId: string): Promise<Blocker[] | undefined>;
  /** `blockers` of many workflows in one read; unknown ids are absent from the map. */
  blockersOf(workflowIds: readonly string[]): Promise<ReadonlyMap<string, readonly Blocker[]>>;
  /**
   * The `definitions` listing (R54): each version of each workflow (this engine's, the live
   * workers', and any with workflows in flight), with its in-flight count, the live workers
   * that define it, and whether it is `serving`, `draining` or `drained`.
   */
  versions(): Promise<DefinitionVersionView[]>;
  /** The worker registry, most recent heartbeat first; stale rows only with `includeStale`. */
  workers(options?: { includeStale?: boolean }): Promise<WorkerView[]>;
  startWorker(options: WorkerOptions): Promise<WorkerHandle>;
  /** Calls `listener` after each step handler this engine's workers run; returns an unsubscribe. */
  onHandlerRun(listener: HandlerRunListener): () => void;
  /** Runs one sweeper pass now (tests, tools); returns the edges written. */
  sweep(): Promise<number>;
  /** The stored schedules (R41), each with its pause, ticks, last workflow and history. */
  schedules(): Promise<ScheduleView[]>;
  pauseSchedule(name: string, request: ScheduleRequest): Promise<ScheduleAnswer>;
  resumeSchedule(name: string, request: ScheduleRequest): Promise<ScheduleAnswer>;
  /** Submits one workflow of the schedule now, with its own idempotency key. */
  triggerSchedule(name: string, request: ScheduleRequest): Promise<ScheduleTriggerAnswer>;
  /** Runs one scheduler pass now (tests, tools); returns the workflows it submitted. */
  runSchedules(): Promise<ScheduledSubmission[]>;
  /**
   * Retention (docs/retention.md): removes workflows that can no longer move, finished at least
   * `olderThanMs` ago, with their tasks and log, a whole log partition at a time, then the events
   * no kept workflow needs, and says what holds the partitions that stay. Recorded in
   * `retentionRuns()` unless `dryRun`.
   */
  purgeFinished(request: PurgeFinishedRequest): Promise<PurgeFinishedAnswer>;
  /** The latest retention runs, newest first (default 20). */
  retentionRuns(options?: { limit?: number }): Promise<RetentionRun[]>;
  /** Stops every worker started here and closes the connections. */
  close(options?: { drainMs?: number }): Promise<void>;
  /** host/pid/boot id of this engine. */
  readonly holder: string;
  /**
   * The workflow definitions this engine runs: by name, the latest version listed (what new
   * submits take); every version in `versions`, one version by `at(name, version)` (R54).
   */
  readonly definitions: WorkflowRegistry;
  /** The Kysely instance (for a caller's own transactions around `submit`). */
  readonly db: Kysely<CausewayDatabase>;
}

export function createEngine(options: EngineOptions): Engine {
  const databaseUrl = options.databaseUrl ?? process.env.DATABASE_URL;
  if (databaseUrl === undefined || databaseUrl === '') {
    throw new EngineError(
      'invalid_request',
      'createEngine needs databaseUrl or the DATABASE_URL environment variable',
    );
  }
  const leaseMs = positive('leaseMs', options.leaseMs ?? 30_000);
  const sweepIntervalMs = positive('sweepIntervalMs', options.sweepIntervalMs ?? 1_000);
  const pollIntervalMs = positive('pollIntervalMs', options.pollIntervalMs ?? 1_000);
  const heartbeatMs = positive('workerHeartbeatMs', options.workerHeartbeatMs ?? 5_000);
  const ageOutMs = positive('workerAgeOutMs', options.workerAgeOutMs ?? 30_000);
  if (ageOutMs < 2 * heartbeatMs) {
    throw new RangeError(
      `workerAgeOutMs (${ageOutMs}) must be at least twice workerHeartbeatMs (${heartbeatMs})`,
    );
  }
  // With the children its map steps start (a one-step child is defined nowhere else).
  const definitions = workflowRegistry(withMapChildren(options.workflows as WorkflowDefinition[]));
  // The one-statement claim and settle follow the edge table, or the engine does not start.
  oneStatementPaths();
  const holder = newHolderId();
  const rootLogger = options.logger ?? defaultLogger();
  const logger = engineLogger(rootLogger, holder);
  if (options.directUrl === '') {
    throw new EngineError('invalid_request', 'createEngine: directUrl is empty');
  }
  const directUrl = options.directUrl ?? databaseUrl;
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.poolSize ?? 10 });
  if (options.preparedStatements !== false) usePreparedStatements(pool);
  pool.on('error', (error) => logger.warn({ err: error }, 'idle database connection failed'));
  // A connection the server cuts while a client is checked out but between statements (a
  // restart, pg_terminate_backend) is reported on the client, not the pool: unheard, it would
  // kill the process. The next statement on it fails and its caller retries.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<CausewayDatabase>({ dialect: new PostgresDialect({ pool }) });
  registerPool(db, pool, { sessionState: options.preparedStatements !== false });
  const notifier = new Notifier(directUrl, logger, wakeupChannel);
  const registry = new WorkerRegistry(db, holder, definitions, logger, {
    heartbeatMs,
    ageOutMs,
    appVersion: options.appVersion ?? null,
  });
  // Every rate limit a step spends is declared, once, and could grant its cost (R51).
  const rateLimits = options.rateLimits ?? [];
  const rateProblems = rateLimitDeclarationProblems(rateLimits, definitions.versions);
  if (rateProblems.length > 0) throw new DefinitionError('invalid rate limits', rateProblems);
  const apply = applyContextOf(definitions, leaseMs, rateLimits);
  const context: EngineContext = {
    db,
    definitions,
    apply,
    holder,
    rootLogger,
    logger,
    leaseMs,
    sweepIntervalMs,
    pollIntervalMs,
    notifier,
    registry,
    channels: new Map((options.channels ?? []).map((channel) => [channel.name, channel])),
    handlerRuns: new HandlerRunObservers(),
  };
  const queueLimits = new Map(Object.entries(options.queues ?? {}));
  const submitContext = {
    db,
    definitions,
    queueLimits,
    apply: context.apply,
    logger: context.logger,
  };
  const scheduling = engineScheduleContext({
    schedules: options.schedules ?? [],
    definitions,
    submit: submitContext,
    logger,
    intervalMs: sweepIntervalMs,
  });
  const workers = new Set<Worker>();
  let closed: Promise<void> | null = null;
  const assertOpen = () => {
    if (closed !== null) throw new EngineError('closed', 'the engine is closed');
  };

  const close = (closeOptions: { drainMs?: number } = {}): Promise<void> => {
    closed ??= (async () => {
      await Promise.all([...workers].map((worker) => worker.stop(closeOptions)));
      await notifier.close();
      await db.destroy();
      // Kysely ends only a pool it has used; statements sent straight to it may be all there were.
      if (!pool.ended) await pool.end();
    })();
    return closed;
  };
  // R6: the service's root signal stops it; one aborted already means it is shutting down.
  if (options.signal?.aborted) void close();
  else options.signal?.addEventListener('abort', () => void close(), { once: true });

  return {
    holder,
    definitions,
    db,
    migrate: () => (directUrl === databaseUrl ? migrateToLatest(db) : migrateDirectly(directUrl)),
    async submit(name, input, submitOptions = {}) {
      assertOpen();
      const { idempotencyKey, ...rest } = submitOptions;
      const [result] = await submitMany(
        submitContext,
        [{ name, input, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) }],
        rest,
      );
      return result as SubmitResult;
    },
    submitMany(requests, submitOptions = {}) {
      assertOpen();
      return submitMany(submitContext, requests, submitOptions);
    },
    cancelWorkflow: (workflowId, requester = {}) => cancelWorkflow(context, workflowId, requester),
    cancelTask: (taskId, requester = {}) => cancelTask(context, taskId, requester),
    replayTask: (taskId, request) => replayTask(context, taskId, request),
    requeueDead: (request) => requeueDead(context, request),
    recordReceipt: (taskId, outcome) => recordReceipt(context, taskId, outcome),
    async sendEvent(name, key, payload, { idempotencyKey, reason, ...sendOptions } = {}) {
      assertOpen();
      const event = {
        name,
        key,
        payload,
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
        ...(reason === undefined ? {} : { reason }),
      };
      const [answer] = await sendEvents(context, [event], sendOptions);
      return answer as SendEventAnswer;
    },
    sendEvents: (events, sendOptions) => {
      assertOpen();
      return sendEvents(context, events, sendOptions);
    },
    getWorkflow: (workflowId) => readWorkflowView(db, definitions, workflowId),
    explain: (workflowId) => explainWorkflow(db, workflowId, rateLimits),
    children: (workflowId, request) => readChildren(db, workflowId, request),
    async blockers(workflowId) {
      assertUuid(workflowId, 'workflow');
      return (await readBlockers(db, definitions, [workflowId], rateLimits)).get(workflowId);
    },
    blockersOf: (workflowIds) => readBlockers(db, definitions, workflowIds, rateLimits),
    versions: () => listDefinitionVersions(db, definitions),
    workers: (workersOptions) => listWorkers(db, workersOptions),
    async startWorker(workerOptions) {
      assertOpen();
      // A worker that sweeps also runs the scheduler (R40), unless told not to.
      const schedules =
        scheduling.schedules.size > 0 &&
        workerOptions.sweeper !== false &&
        workerOptions.scheduler !== false;
      if (scheduling.schedules.size > 0) await scheduling.ready();
      const worker = new Worker(
        context,
        workerOptions,
        schedules ? [new Scheduler(scheduling)] : [],
      );
      workers.add(worker);
      // Its loops serve no caller: a schedule's tick is in no trace of whoever started it (R57).
      await outsideAnyTrace(() => worker.start());
      const stop = worker.stop.bind(worker);
      return {
        running: worker.running,
        stop: async (stopOptions) => {
          await stop(stopOptions);
          workers.delete(worker);
        },
      };
    },
    onHandlerRun: (listener) => context.handlerRuns.add(listener),
    sweep: () => new Sweeper(context).sweep(),
    schedules: () => listSchedules(scheduling),
    pauseSchedule: (name, request) => pauseOrResumeSchedule(scheduling, name, request, true),
    resumeSchedule: (name, request) => pauseOrResumeSchedule(scheduling, name, request, false),
    triggerSchedule: (name, request) => triggerSchedule(scheduling, name, request),
    runSchedules: () => runSchedulerPass(scheduling),
    ...queueOperationsOf(db, definitions),
    ...concurrencyOperationsOf(db, definitions),
    ...rateLimitOperationsOf(db, rateLimits),
    purgeFinished: (request) => {
      assertOpen();
      return purgeFinished(db, logger, request);
    },
    retentionRuns: (runsOptions) => retentionRuns(db, runsOptions),
    close,
  };
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0)
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}
