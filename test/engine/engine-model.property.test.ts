/**
 * Model-based test of the REAL engine on PostgreSQL against the PURE machine (docs/rules.md, docs/state-machine.md).
 *
 * fast-check generates command sequences (submit — some delayed, R36 —, claim, complete,
 * fail, await receipt, snooze, effect start / checkpoint, renew, release, cancel task /
 * workflow, receipts, replay, bulk requeue, clock moves with sweeps — past leases, deadlines,
 * receipts, run_at and wait timeouts —, sendEvent (model-events.ts: matching, early, unmatched, duplicate, conflicting,
 * invalid), a wait that gives up, gets its event late and is replayed, schedule ticks
 * (model-schedules.ts: `runSchedules`, R40), and child workflows (R43–R47,
 * model-children-commands.ts: a running step starts 1–3 children with or without a
 * tolerance, a child runs, succeeds or fails; model-children-stories.ts: all succeed, one
 * fails and the dead step is replayed, the parent is cancelled while they run, the shared
 * deadline passes; cancels of the parent, model-cancel.ts; replays of the dead step). Command
 * classes live beside this file: model-clock.ts, model-replay.ts, model-events.ts,
 * model-schedules.ts, model-cancel.ts, model-children-*.ts, on the harness in
 * model-harness.ts. Each command runs against the engine — through its public
 * operations, its transaction-taking `submit`, or the same internal calls its worker makes
 * (`taskClaimCandidates` + `applyEvents` for claims, `applyEvents` with the lease fence for
 * settles, `taskWriteFenced` for boundaries, `leaseRenewMany`, the `Sweeper`) — and against
 * the model (model-state.ts: `createWorkflowRun` / `applyTaskEvent` / `cancelWorkflowRun` on
 * in-memory runs at the same database time and with the same jitter, plus the engine's own
 * columns and rows as the contract describes them). After every command:
 *   - every workflow's state, and every task's state, attempt, replay count, effect marker,
 *     run_at, deadline, lease holder / epoch / expiry, receipt, last error, checkpoints, output,
 *     and what it waits for (event name, key, since, gives up at);
 *   - the transition rows the command appended (task and workflow rows, in log order: task,
 *     from, to, reason, error category and summary, actor, attempt, detail), and their time;
 *   - the operation's answer (cancel, receipt, replay, bulk requeue, submit, sendEvent);
 * and at the end of each run R25 (`logMismatches`).
 *
 * Shared with production on purpose: the pure machine (@causeway/workflow) is this test's
 * model of each DECISION — the engine must take exactly the edges the machine plans, and the
 * machine is checked on its own against an independent model (machine.property.test.ts).
 * What the engine adds around a decision — log rows (R24) and their order, the parent's row
 * (the aggregation table), lease/receipt/output columns (R7, R23) — is the test's own encoding in model-state.ts,
 * and the database is read with plain SQL in column names (model-system.ts), never through
 * the engine's row mappers or schema types. The engine internals imported below are the
 * system under test (the worker's claim, settle, fenced write, renewal and sweeper paths,
 * driven one command at a time), not parts of the model.
 *
 * No background worker runs, so each run is deterministic. Time: the model uses the database
 * time of the command's own transaction (or, for operations that open theirs, the time stamped
 * on the rows they wrote); sweeps are guarded so no deadline falls between the sweeper's
 * listing and its writes (model-system.ts). Jitter: fast-check picks one value per command and
 * both sides draw it, so retry run_at values are compared to the millisecond. Runs share the
 * test database: each one only looks at its own workflows, starts an hour of database time
 * after the previous one, and leaves no claimable, sweepable or waiting task behind
 * (RealSystem.cleanup).
 *
 * Settings: CAUSEWAY_FC_ENGINE_RUNS (default 100 runs: 1–3 workflows and half the time a parent of
 * child workflows, then up to 30 commands);
 * CAUSEWAY_FC_STATS=1 prints how often each edge was reached. Reproduce a failure with what
 * fast-check prints:
 *   CAUSEWAY_FC_SEED=… CAUSEWAY_FC_PATH=… CAUSEWAY_FC_REPLAY_PATH=… pnpm exec vitest run <file>
 */
import type { Actor, ErrorCategory, TaskEvent } from '@causeway/workflow/internal';
import fc from 'fast-check';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { taskClaimCandidates } from '../../packages/engine/src/db/claim/claim-load';
import { leaseRenewMany } from '../../packages/engine/src/db/lease/lease-renew';
import { taskWriteFenced } from '../../packages/engine/src/db/lease/task-write-fenced';
import { applyEvents } from '../../packages/engine/src/runtime/decision/apply-events';
import { specErrorCategories } from '../helpers/contract-tables';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, testEngine } from '../helpers/engine';
import { commandsReplayPath } from '../workflow/arbitraries';
import { CancelTaskCommand, cancelWorkflowCommand } from './model-cancel';
import {
  childOutcomeCommand,
  StartChildrenCommand,
  startChildrenCommand,
} from './model-children-commands';
import { childrenStoryCommand } from './model-children-stories';
import { ClockCommand, type ClockTarget } from './model-clock';
import { sendEventCommand, waitGivesUpCommand } from './model-events';
import {
  answerOf,
  applyInTransaction,
  type Command,
  clockOf,
  expectRows,
  expectSorted,
  fenceOf,
  holdsLeaseState,
  ModelCommand,
  modelHoldsLease,
  pickTask,
  reached,
  rowsOf,
  tally,
} from './model-harness';
import { BulkRequeueCommand, deadReasons, ReplayCommand } from './model-replay';
import { scheduleTickCommand } from './model-schedules';
import { EngineModel, type LogRow, type ModelTask } from './model-state';
import { createShared, type DbRow, databaseNow, RealSystem } from './model-system';
import {
  leaseMs,
  modelEngineWorkflows,
  modelQueues,
  modelSchedule,
  modelWorkflows,
  workerHolders,
} from './model-workflows';

const database = useTestDatabase();

// =============================================================================================
// Settings

const numRuns = readPositiveInteger('CAUSEWAY_FC_ENGINE_RUNS', 100);
const maxCommands = 30;

function parameters<T>(): fc.Parameters<T> {
  const seed = process.env.CAUSEWAY_FC_SEED;
  const path = process.env.CAUSEWAY_FC_PATH;
  return {
    numRuns,
    ...(seed !== undefined && seed !== '' ? { seed: Number(seed) } : {}),
    ...(path !== undefined && path !== '' ? { path } : {}),
  };
}

function readPositiveInteger(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${text}`);
  }
  return value;
}

/** Submit in the test's transaction (the public `transaction` option), so both see one `now`. */
class SubmitCommand extends ModelCommand {
  constructor(
    readonly definitionIndex: number,
    readonly key: number | null,
    /** R36: `submit(..., { delayMs })` delays the first steps. */
    readonly delayMs = 0,
  ) {
    super(0);
  }

  toString() {
    const definition = modelWorkflows[this.definitionIndex] ?? modelWorkflows[0];
    const delay = this.delayMs === 0 ? '' : `, delayed ${this.delayMs} ms`;
    return `submit(${definition?.name}${this.key === null ? '' : `, key ${this.key}`}${delay})`;
  }

  protected async execute(model: EngineModel, system: RealSystem, label: string) {
    const definition = modelWorkflows[this.definitionIndex % modelWorkflows.length];
    if (definition === undefined) throw new Error('no workflow definitions');
    const key = this.key === null ? null : `${system.runId}-key-${this.key}`;
    const input = { n: model.workflows.length };
    const { now, result, tasks } = await system.db.transaction().execute(async (tx) => {
      const now = await databaseNow(tx);
      const result = await system.engine.submit(definition.name, input, {
        transaction: tx,
        ...(key === null ? {} : { idempotencyKey: key }),
        ...(this.delayMs === 0 ? {} : { delayMs: this.delayMs }),
      });
      const { rows: tasks } = await sql<{ id: string; step: string }>`
        select id, step from causeway_tasks where workflow_id = ${result.workflow.id}`.execute(tx);
      return { now, result, tasks };
    });
    system.workflowIds.add(result.workflow.id);
    const rows = await system.takeRows();
    const existing = key === null ? undefined : model.byKey(definition.name, key);
    if (existing !== undefined) {
      // R2: the same workflow, its current state, nothing written.
      expect(result, label).toEqual({
        workflow: { id: existing.id, state: existing.parent },
        deduplicated: true,
      });
      tally('submit: deduplicated');
      expectRows(label, rows, []);
      return;
    }
    expect(result.deduplicated, label).toBe(false);
    const taskIds = definition.steps.map(
      (step) => tasks.find((task) => task.step === step.name)?.id ?? `missing ${step.name}`,
    );
    const expected = model.submit(
      definition,
      key,
      { workflowId: result.workflow.id, taskIds },
      now,
      input,
      { delayMs: this.delayMs },
    );
    // R37: a first step that waits takes an event kept for it (never one sent before its
    // workflow was accepted, so none here).
    const clock = clockOf(now, this.jitter);
    expected.push(...model.followUp(clock, rows, system));
    expect(result.workflow.state, label).toBe(model.workflow(result.workflow.id).parent);
    expectRows(label, rows, expected, now);
  }
}

/** A worker's claim transaction: SKIP LOCKED candidates of a queue, then `claim` events. */
class ClaimCommand extends ModelCommand {
  constructor(
    readonly queueIndex: number,
    readonly holderIndex: number,
    readonly limit: number,
  ) {
    super(0);
  }

  toString() {
    return `claim(queue ${this.queueIndex}, worker ${this.holderIndex}, up to ${this.limit})`;
  }

  override check(model: Readonly<EngineModel>): boolean {
    return (model as EngineModel).tasks().some((task) => task.task.snapshot.state === 'queued');
  }

  protected async execute(model: EngineModel, system: RealSystem, label: string) {
    // The index-th queue that has ready work (as of now), else the index-th queue.
    const before = (await system.now()).getTime();
    const ready = modelQueues.filter((queue) =>
      model
        .tasks()
        .some(
          (task) =>
            task.step.queue === queue &&
            task.task.snapshot.state === 'queued' &&
            (task.task.snapshot.runAt?.getTime() ?? Number.POSITIVE_INFINITY) <= before,
        ),
    );
    const queue = (ready[this.queueIndex % Math.max(1, ready.length)] ??
      modelQueues[this.queueIndex]) as string;
    label = `${label} = ${queue}`;
    const holder = workerHolders[this.holderIndex] as string;
    const event: TaskEvent = { type: 'claim', actor: { kind: 'worker', name: holder } };
    const { now, claimed } = await system.db.transaction().execute(async (tx) => {
      const now = await databaseNow(tx);
      // Extra room so rows of other runs (there should be none) cannot crowd this run's out.
      const candidates = (await taskClaimCandidates(tx, queue, this.limit + 50))
        .filter((candidate) => system.workflowIds.has(candidate.workflowId))
        .slice(0, this.limit);
      if (candidates.length > 0) {
        await applyEvents(
          tx,
          system.context.apply,
          candidates.map((candidate) => ({ taskId: candidate.id, event })),
          {
            skipLocked: true,
            holder,
            workflowIdOf: new Map(
              candidates.map((candidate) => [candidate.id, candidate.workflowId]),
            ),
          },
        );
      }
      return { now, claimed: candidates.map((candidate) => candidate.id) };
    });
    const rows = await system.takeRows();

    // R4: only queued tasks whose run_at has come; oldest run_at first (ties in any order).
    const eligible = model
      .tasks()
      .filter(
        (task) =>
          task.step.queue === queue &&
          task.task.snapshot.state === 'queued' &&
          task.task.snapshot.runAt !== null &&
          task.task.snapshot.runAt.getTime() <= now.getTime(),
      );
    const runAtOf = (taskId: string) => model.task(taskId).task.snapshot.runAt?.getTime() ?? -1;
    expect(claimed.length, `${label}: claimed count`).toBe(Math.min(this.limit, eligible.length));
    const eligibleIds = eligible.map((task) => task.task.taskId);
    for (const id of claimed) expect(eligibleIds, `${label}: claimed a ready task`).toContain(id);
    expectSorted(
      `${label}: claim order`,
      claimed.map((id) => [runAtOf(id)]),
    );
    const latestClaimed = Math.max(...claimed.map(runAtOf));
    for (const task of eligible) {
      if (claimed.includes(task.task.taskId)) continue;
      expect(
        runAtOf(task.task.taskId),
        `${label}: a later task was claimed first`,
      ).toBeGreaterThanOrEqual(latestClaimed);
    }
    const clock = clockOf(now, this.jitter);
    const expected = claimed.flatMap((id) => rowsOf(model.apply(id, event, clock, { holder })));
    expected.push(...model.followUp(clock, rows, system));
    expectRows(label, rows, expected, now);
  }
}

type SettleKind = 'complete' | 'fail' | 'await_receipt' | 'release' | 'snooze';

/** A running step reports its result: one event fenced on its lease (R7), as the settler writes it. */
class SettleCommand extends ModelCommand {
  constructor(
    readonly kind: SettleKind,
    readonly taskIndex: number,
    readonly anyTask: boolean,
    readonly stale: boolean,
    readonly category: ErrorCategory,
    readonly retryAfterMs: number | null,
    readonly receiptTimeoutMs: number,
    jitter: number,
  ) {
    super(jitter);
  }

  toString() {
    const what =
      this.kind === 'fail'
        ? `fail ${this.category}${this.retryAfterMs === null ? '' : ` retry-after ${this.retryAfterMs}`}`
        : this.kind === 'await_receipt'
          ? `await_receipt ${this.receiptTimeoutMs} ms`
          : this.kind === 'snooze'
            ? `snooze ${this.receiptTimeoutMs} ms`
            : this.kind;
    return `${what}(task ${this.taskIndex}${this.anyTask ? ' of all' : ''}${this.stale ? ', stale fence' : ''}, jitter ${this.jitter})`;
  }

  override check(model: Readonly<EngineModel>): boolean {
    return this.target(model as EngineModel) !== undefined;
  }

  private target(model: EngineModel): ModelTask | undefined {
    return pickTask(model, this.taskIndex, this.anyTask ? null : holdsLeaseState);
  }

  protected async execute(model: EngineModel, system: RealSystem, label: string) {
    const target = this.target(model);
    if (target === undefined) return;
    const taskId = target.task.taskId;
    const fence = fenceOf(target, this.stale);
    const actor: Actor = { kind: 'worker', name: fence.holder };
    const receipt = {
      id: `receipt-${taskId.slice(0, 8)}-${fence.epoch}`,
      timeoutMs: this.receiptTimeoutMs,
    };
    const event: TaskEvent =
      this.kind === 'fail'
        ? {
            type: 'fail',
            actor,
            category: this.category,
            summary: `model failure (${this.category})`,
            ...(this.retryAfterMs === null ? {} : { retryAfterMs: this.retryAfterMs }),
          }
        : this.kind === 'snooze'
          ? // R36: run again later; the same lengths as a receipt's wait, within or past a deadline.
            {
              type: 'snooze',
              actor,
              forMs: this.receiptTimeoutMs,
              untilMs: null,
              reason: 'model snooze',
            }
          : { type: this.kind, actor };
    const output = { by: fence.holder, epoch: fence.epoch };
    const extra =
      this.kind === 'complete'
        ? { outputJson: JSON.stringify(output) }
        : this.kind === 'await_receipt'
          ? { receipt }
          : undefined;
    const { now, outcome } = await applyInTransaction(system, {
      taskId,
      event,
      fence,
      ...(extra === undefined ? {} : { extra }),
    });
    const rows = await system.takeRows();
    if (!modelHoldsLease(target, fence, now, false)) {
      // A stale writer changes nothing (R7).
      expect(outcome?.kind, `${label}: outcome`).toBe('stale');
      tally(`${this.kind}: stale writer`);
      expectRows(label, rows, []);
      return;
    }
    const clock = clockOf(now, this.jitter);
    const expected = model.apply(taskId, event, clock, {
      ...(this.kind === 'await_receipt' ? { receipt } : {}),
      ...(this.kind === 'complete' ? { output } : {}),
    });
    expect(outcome?.kind, `${label}: outcome`).toBe(expected.kind);
    if (expected.kind === 'refused') tally(`${this.kind}: refused ${expected.refusal.code}`);
    if (outcome?.kind === 'refused' && expected.kind === 'refused') {
      expect(outcome.refusal.code, label).toBe(expected.refusal.code);
    }
    // A completion may start a wait that an event kept for it ends at once (R37).
    expectRows(label, rows, [...rowsOf(expected), ...model.followUp(clock, rows, system)], now);
  }
}

/**
 * `ctx.boundary()` / `ctx.checkpoint()`: the fenced "effect started" write (R10, R19); under
 * `cancel_requested` the step then confirms the cancel with a `boundary` event (R13).
 */
class EffectCommand extends ModelCommand {
  constructor(
    readonly taskIndex: number,
    readonly anyTask: boolean,
    readonly stale: boolean,
    readonly checkpoint: string | null,
  ) {
    super(0);
  }

  toString() {
    return `${this.checkpoint === null ? 'boundary' : `checkpoint ${this.checkpoint}`}(task ${this.taskIndex}${this.anyTask ? ' of all' : ''}${this.stale ? ', stale fence' : ''})`;
  }

  override check(model: Readonly<EngineModel>): boolean {
    return this.target(model as EngineModel) !== undefined;
  }

  private target(model: EngineModel): ModelTask | undefined {
    return pickTask(model, this.taskIndex, this.anyTask ? null : holdsLeaseState);
  }

  protected async execute(model: EngineModel, system: RealSystem, label: string) {
    const target = this.target(model);
    if (target === undefined) return;
    const taskId = target.task.taskId;
    const fence = fenceOf(target, this.stale);
    const checkpoint = this.checkpoint;
    const written = await system.db.transaction().execute(async (tx) => {
      const now = await databaseNow(tx);
      const state = await taskWriteFenced(tx, fence, {
        effectStarted: true,
        ...(checkpoint === null
          ? {}
          : { checkpoint: { name: checkpoint, dataJson: JSON.stringify({ epoch: fence.epoch }) } }),
      });
      return { now, state };
    });
    const holds = modelHoldsLease(target, fence, written.now, true);
    if (holds !== undefined) {
      expect(written.state, `${label}: fenced write`).toBe(
        holds ? target.task.snapshot.state : null,
      );
    }
    if (written.state !== null) model.recordEffect(taskId, checkpoint);
    tally(`effect write: ${written.state ?? 'fenced out'}`);

    let expected: readonly LogRow[] = [];
    let at: Date | undefined;
    let rows: DbRow[] = [];
    if (written.state === 'cancel_requested') {
      const event: TaskEvent = { type: 'boundary', actor: { kind: 'worker', name: fence.holder } };
      const { now, outcome } = await applyInTransaction(system, {
        taskId,
        event,
        fence,
      });
      rows = await system.takeRows();
      at = now;
      if (modelHoldsLease(model.task(taskId), fence, now, false)) {
        const clock = clockOf(now, this.jitter);
        const decided = model.apply(taskId, event, clock);
        expect(outcome?.kind, `${label}: boundary outcome`).toBe(decided.kind);
        expected = [...rowsOf(decided), ...model.followUp(clock, [], system)];
      } else {
        expect(outcome?.kind, `${label}: boundary outcome`).toBe('stale');
      }
    }
    expectRows(label, [...rows, ...(await system.takeRows())], expected, at);
  }
}

/** Lease renewal (R9): conditional on holder, epoch, `leased` and an unexpired lease. */
class RenewCommand extends ModelCommand {
  constructor(
    readonly taskIndex: number,
    readonly anyTask: boolean,
    readonly stale: boolean,
  ) {
    super(0);
  }

  toString() {
    return `renew(task ${this.taskIndex}${this.anyTask ? ' of all' : ''}${this.stale ? ', stale fence' : ''})`;
  }

  override check(model: Readonly<EngineModel>): boolean {
    return this.target(model as EngineModel) !== undefined;
  }

  private target(model: EngineModel): ModelTask | undefined {
    return pickTask(model, this.taskIndex, this.anyTask ? null : holdsLeaseState);
  }

  protected async execute(model: EngineModel, system: RealSystem, label: string) {
    const target = this.target(model);
    if (target === undefined) return;
    const fence = fenceOf(target, this.stale);
    const { now, renewed } = await system.db.transaction().execute(async (tx) => {
      const now = await databaseNow(tx);
      const renewed = await leaseRenewMany(
        tx,
        fence.holder,
        [{ taskId: fence.taskId, epoch: fence.epoch }],
        leaseMs,
      );
      return { now, renewed: renewed.has(fence.taskId) };
    });
    const holds = modelHoldsLease(target, fence, now, true);
    if (holds !== undefined) {
      expect(renewed, `${label}: renewed`).toBe(holds && target.task.snapshot.state === 'leased');
    }
    if (renewed) model.renew(fence.taskId, now);
    tally(`renew: ${renewed ? 'renewed' : 'refused'}`);
    expectRows(label, await system.takeRows(), []);
  }
}

/** A receipt arrives (R23): confirmed, or rejected with an error category. */
class ReceiptCommand extends ModelCommand {
  constructor(
    readonly taskIndex: number,
    readonly anyTask: boolean,
    readonly rejected: ErrorCategory | null,
    jitter: number,
  ) {
    super(jitter);
  }

  toString() {
    return `receipt ${this.rejected === null ? 'ok' : `rejected ${this.rejected}`}(task ${this.taskIndex}${this.anyTask ? ' of all' : ''}, jitter ${this.jitter})`;
  }

  override check(model: Readonly<EngineModel>): boolean {
    return this.target(model as EngineModel) !== undefined;
  }

  private target(model: EngineModel): ModelTask | undefined {
    return pickTask(
      model,
      this.taskIndex,
      this.anyTask ? null : (task) => task.task.snapshot.state === 'awaiting_receipt',
    );
  }

  protected async execute(model: EngineModel, system: RealSystem, label: string) {
    const target = this.target(model);
    if (target === undefined) return;
    const taskId = target.task.taskId;
    const message = `platform said no (${this.rejected})`;
    const answer = await system.recordReceipt(
      taskId,
      this.rejected === null ? { ok: true } : { ok: false, category: this.rejected, message },
    );
    const rows = await system.takeRows();
    // The engine's `now` for a retry's run_at and the deadline check is the log's time.
    const now = rows[0]?.at ?? (await system.now());
    const actor: Actor = { kind: 'receipt' };
    const event: TaskEvent =
      this.rejected === null
        ? { type: 'receipt_confirmed', actor }
        : { type: 'receipt_rejected', actor, category: this.rejected, summary: message };
    const clock = clockOf(now, this.jitter);
    const expected = model.apply(taskId, event, clock);
    const after = model.followUp(clock, rows, system);
    expect(answer, `${label}: answer`).toEqual(answerOf(model, taskId, expected));
    expectRows(label, rows, [...rowsOf(expected), ...after], now);
  }
}

// =============================================================================================
// Arbitraries

/** A jitter sample in [0, 1), constant within a command; common values first. */
const jitterArbitrary = fc.oneof(
  fc.constantFrom(0, 0.5, 0.999),
  fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
);
const indexArbitrary = fc.nat({ max: 11 });
/** Mostly the natural target; sometimes any task, to reach refusals and stale writers. */
const anyTaskArbitrary = fc.oneof(
  { arbitrary: fc.constant(false), weight: 6 },
  { arbitrary: fc.constant(true), weight: 1 },
);
const staleArbitrary = fc.oneof(
  { arbitrary: fc.constant(false), weight: 8 },
  { arbitrary: fc.constant(true), weight: 1 },
);
const categoryArbitrary = fc.constantFrom(...specErrorCategories);

const submitCommand = fc
  .record({
    definition: fc.nat({ max: modelWorkflows.length - 1 }),
    key: fc.option(fc.nat({ max: 2 }), { freq: 3 }),
    delayMs: fc.constantFrom(0, 0, 0, 20_000),
  })
  .map(({ definition, key, delayMs }) => new SubmitCommand(definition, key, delayMs));

const claimCommand = fc
  .record({
    queue: fc.nat({ max: modelQueues.length - 1 }),
    holder: fc.nat({ max: workerHolders.length - 1 }),
    limit: fc.integer({ min: 1, max: 3 }),
  })
  .map(({ queue, holder, limit }) => new ClaimCommand(queue, holder, limit));

function settleCommand(kind: SettleKind) {
  return fc
    .record({
      task: indexArbitrary,
      anyTask: anyTaskArbitrary,
      stale: staleArbitrary,
      category: categoryArbitrary,
      retryAfterMs: fc.option(fc.constantFrom(1, 1_500, 90_000), { freq: 3 }),
      receiptTimeoutMs: fc.constantFrom(20_000, 120_000),
      jitter: jitterArbitrary,
    })
    .map(
      (c) =>
        new SettleCommand(
          kind,
          c.task,
          c.anyTask,
          c.stale,
          c.category,
          c.retryAfterMs,
          c.receiptTimeoutMs,
          c.jitter,
        ),
    );
}

const effectCommand = fc
  .record({
    task: indexArbitrary,
    anyTask: anyTaskArbitrary,
    stale: staleArbitrary,
    checkpoint: fc.option(fc.constantFrom('rendered', 'uploaded'), { freq: 2 }),
  })
  .map(
    ({ task, anyTask, stale, checkpoint }) => new EffectCommand(task, anyTask, stale, checkpoint),
  );

const renewCommand = fc
  .record({ task: indexArbitrary, anyTask: anyTaskArbitrary, stale: staleArbitrary })
  .map(({ task, anyTask, stale }) => new RenewCommand(task, anyTask, stale));

const clockCommand = fc
  .record({
    target: fc.constantFrom<ClockTarget>('lease', 'deadline', 'receipt', 'run_at', 'wait', 'fixed'),
    task: indexArbitrary,
    fixedMs: fc.constantFrom(0, 500, 3_000, 15_000, 35_000, 100_000, 200_000),
    sweep: fc.oneof(
      { arbitrary: fc.constant(true), weight: 4 },
      { arbitrary: fc.constant(false), weight: 1 },
    ),
    jitter: jitterArbitrary,
  })
  .map(
    ({ target, task, fixedMs, sweep, jitter }) =>
      new ClockCommand(target, task, fixedMs, sweep, jitter),
  );

const cancelTaskCommand = fc
  .record({ task: indexArbitrary, anyTask: anyTaskArbitrary, operator: fc.boolean() })
  .map(({ task, anyTask, operator }) => new CancelTaskCommand(task, anyTask, operator));

const receiptCommand = fc
  .record({
    task: indexArbitrary,
    anyTask: anyTaskArbitrary,
    rejected: fc.option(categoryArbitrary, { freq: 2 }),
    jitter: jitterArbitrary,
  })
  .map(
    ({ task, anyTask, rejected, jitter }) => new ReceiptCommand(task, anyTask, rejected, jitter),
  );

const replayCommand = fc
  .record({ task: indexArbitrary, anyTask: anyTaskArbitrary })
  .map(({ task, anyTask }) => new ReplayCommand(task, anyTask));

/** R47: a replay of a dead step that started children. */
const replayParentCommand = indexArbitrary.map((task) => new ReplayCommand(task, false, true));

const bulkRequeueCommand = fc
  .nat({ max: deadReasons.length - 1 })
  .map((reason) => new BulkRequeueCommand(reason));

const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  { arbitrary: submitCommand, weight: 4 },
  { arbitrary: claimCommand, weight: 6 },
  { arbitrary: settleCommand('complete'), weight: 4 },
  { arbitrary: settleCommand('fail'), weight: 4 },
  { arbitrary: settleCommand('await_receipt'), weight: 2 },
  { arbitrary: settleCommand('release'), weight: 2 },
  { arbitrary: settleCommand('snooze'), weight: 2 },
  { arbitrary: effectCommand, weight: 2 },
  { arbitrary: renewCommand, weight: 1 },
  { arbitrary: clockCommand, weight: 3 },
  { arbitrary: cancelTaskCommand, weight: 2 },
  { arbitrary: cancelWorkflowCommand(false), weight: 1 },
  { arbitrary: cancelWorkflowCommand(true), weight: 2 },
  { arbitrary: receiptCommand, weight: 2 },
  { arbitrary: replayCommand, weight: 3 },
  { arbitrary: replayParentCommand, weight: 2 },
  { arbitrary: bulkRequeueCommand, weight: 2 },
  { arbitrary: sendEventCommand, weight: 4 },
  { arbitrary: waitGivesUpCommand, weight: 2 },
  { arbitrary: scheduleTickCommand, weight: 1 },
  { arbitrary: startChildrenCommand, weight: 4 },
  { arbitrary: childOutcomeCommand, weight: 6 },
  { arbitrary: childrenStoryCommand, weight: 3 },
);

// =============================================================================================
// Property

const replaying = (process.env.CAUSEWAY_FC_SEED ?? '') !== '';

/** Edges (and non-edges) every default-sized run of this file reaches (any one of each line). */
const expectedReached: readonly (readonly string[])[] = [
  ['task queued → leased (lease_acquired)'],
  ['task leased → succeeded (completed)'],
  ['task leased → queued (retry_scheduled)'],
  ['task leased → queued (lease_expired)'],
  ['task leased → queued (worker_shutdown)'],
  ['task leased → dead (non_retryable_error)'],
  ['task leased → awaiting_receipt (submitted_awaiting_receipt)'],
  ['task leased → cancel_requested (cancel_requested)'],
  ['task pending → queued (upstream_succeeded)'],
  ['task pending → cancelled (cancelled_before_start)'],
  ['task queued → cancelled (cancelled_before_start)'],
  ['task queued → dead (deadline_exceeded_before_start)'],
  ['task dead → queued (manual_replay)', 'task dead → queued (bulk_requeue)'],
  ['complete: stale writer'],
  ['fail: stale writer'],
  ['task ∅ → waiting (submitted)'],
  ['task pending → waiting (event_awaited)'],
  ['task pending → dead (step_input_failed)'],
  ['task waiting → succeeded (event_received)'],
  ['task waiting → succeeded (event_timeout)'],
  ['task waiting → dead (event_timeout)', 'task waiting → dead (deadline_exceeded)'],
  ['task waiting → cancelled (cancelled_while_waiting)'],
  ['task dead → waiting (manual_replay)', 'task dead → waiting (bulk_requeue)'],
  ['sendEvent: matching, 1 waiting'],
  ['sendEvent: refused invalid_event_payload'],
  ['schedule: submitted (caught up)', 'schedule: submitted'],
  // R43–R47: a step's children start, end it every way, are cancelled by it, are replayed.
  ['task leased → awaiting_children (children_started)'],
  ['task ∅ → queued (submitted) by parent'],
  ['task awaiting_children → succeeded (children_succeeded)'],
  ['task awaiting_children → dead (children_failed)'],
  ['task awaiting_children → dead (deadline_exceeded)'],
  ['task awaiting_children → cancel_requested (cancel_requested)'],
  ['task cancel_requested → cancelled (children_cancelled)'],
  ['task cancel_requested → succeeded (cancel_after_submit) by system'],
  ['task leased → cancel_requested (cancel_requested) by parent'],
  ['task queued → cancelled (cancelled_before_start) by parent'],
  ['task dead → awaiting_children (manual_replay)', 'task dead → awaiting_children (bulk_requeue)'],
  ['child workflow started again (replaces)'],
];

describe('engine vs pure model', () => {
  it(
    'the engine on Postgres takes exactly the edges the pure machine plans, command by command',
    async () => {
      const url = database().url;
      const engine = testEngine(url, {
        workflows: modelEngineWorkflows,
        schedules: [modelSchedule],
        leaseMs,
      });
      await engine.migrate();
      const shared = createShared(url, engine);
      await fc.assert(
        fc.asyncProperty(
          // Workflows to start from, so few commands are skipped for lack of a target.
          fc.array(fc.nat({ max: modelWorkflows.length - 1 }), { minLength: 1, maxLength: 3 }),
          // Half the runs have a parent whose step has started its children (R43–R47).
          fc.option(
            fc.record({
              count: fc.integer({ min: 1, max: 3 }),
              tolerate: fc.option(fc.constantFrom(0, 1, 2), { freq: 2 }),
            }),
          ),
          fc.commands([commandArbitrary], {
            maxCommands,
            size: 'max',
            ...(commandsReplayPath === undefined ? {} : { replayPath: commandsReplayPath }),
          }),
          async (initial, withFan, commands) => {
            tally('(runs)');
            const system = await RealSystem.start(shared);
            const model = new EngineModel();
            let failed = true;
            try {
              const fan = modelWorkflows.findIndex((definition) => definition.name === 'model-fan');
              for (const definition of withFan === null ? initial : [...initial, fan]) {
                await new SubmitCommand(definition, null).run(model, system);
              }
              if (withFan !== null) {
                const { count, tolerate } = withFan;
                await new StartChildrenCommand(0, count, tolerate, false).run(model, system);
              }
              await fc.asyncModelRun(() => ({ model, real: system }), commands);
              // R25: every state equals the `to` of its last transition.
              expect(await logMismatches(url), 'R25').toEqual([]);
              failed = false;
            } finally {
              // Never hide the run's own failure behind a cleanup error.
              await system.cleanup().catch((error: unknown) => {
                if (!failed) throw error;
              });
            }
          },
        ),
        parameters(),
      );
      // The comparisons are only worth something if the runs reach the edges: with 100+ fresh
      // runs, each of these is taken dozens of times on average.
      if (numRuns >= 100 && !replaying) {
        const missing = expectedReached.filter((anyOf) => !anyOf.some((what) => reached.has(what)));
        expect(missing, 'edges no run reached').toEqual([]);
      }
      if (process.env.CAUSEWAY_FC_STATS === '1') {
        console.log(
          [...reached.entries()]
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([what, count]) => `${String(count).padStart(6)}  ${what}`)
            .join('\n'),
        );
      }
    },
    60_000 + numRuns * 1_500,
  );
});
