/**
 * Model-based property tests of the pure workflow machine (docs/rules.md, docs/state-machine.md).
 *
 * The "real" system is a `WorkflowRun` driven only through the public reducer
 * (`applyTaskEvent`, `cancelWorkflowRun`) with a simulated clock. The model is the test's own
 * bookkeeping: the full log of emitted rows, each task's state and attempt replayed from that
 * log, the effect markers the engine persisted, and the contract's tables written out by hand
 * (test/helpers/contract-tables.ts: the contract's states, edges, aggregation, R17 categories, R18
 * backoff, R24 actor text). None of the model comes from packages/workflow/src: the machine's
 * own table (`isAllowedEdge`) and fold (`aggregateWorkflowState`) are only ever compared with
 * the hand-written ones, never used as the expectation.
 *
 * Commands: claim (on time, or early: R4/R36), renew, complete, fail (every error category),
 * attempt timeout, lease expiry, effect-started marker, boundary, worker killed mid-effect,
 * cancel task (twice), cancel workflow (twice), receipt confirmed/rejected/timeout, await
 * receipt, replay, bulk requeue, deadline passes, deadline check, release at shutdown, snooze,
 * send an event (matching a waiting step, for a step that does not wait yet, for no step,
 * duplicate by idempotency key, late to a task that no longer waits), a wait's timeout with
 * the sweeper (before, at, after; deadline and timeout checked in either order), advance
 * clock. Each picks its task by index and is usually sent by the contract's actor, sometimes
 * by any actor; refusals are fine.
 *
 * Workflows mix steps that run code (some delayed, R36; the submit may be delayed too) with
 * event steps (R37: first steps or after others, with or without `onTimeout`, under a
 * workflow deadline or not). The model keeps its own event store (model-events.ts): events
 * sent before the workflow's acceptance never match; a wait that starts — at creation, on
 * promotion, after a replay — takes the first kept event of its name and key, as the engine
 * does in the same transaction; after every command no task waits for an event kept for it.
 *
 * After every command: (1) only the edge table (docs/state-machine.md) edges, by the code's table and by the hand-written one;
 * (2) terminal states change only by the operator's dead → queued (dead → waiting for an
 * event step); (3) R25, state = `to` of the last row; (4) parent = the contract's aggregation,
 * with a workflow row exactly when it changes; (5) pending → queued/waiting only once every
 * upstream succeeded, and never left pending after that;
 * (6) attempts ≤ maxAttempts; (7) every dead has its reason and error category; (8) a repeated
 * cancel (task or workflow) emits nothing. Plus: refusals and inputs are never mutated, no
 * snapshot changes without an edge, `leased` only from `queued`, attempts move only on claims
 * and replays, deadlines are never refreshed, run_at is each delay after its start (R36), a
 * wait gives up its own timeout after it began (R39), an event step never runs code (never
 * queued or leased), and per-command expected outcomes.
 *
 * A failure prints a seed, a path and a replayPath. Replay exactly that (shrunk) run with
 *   CAUSEWAY_FC_SEED=<seed> CAUSEWAY_FC_PATH=<path> CAUSEWAY_FC_REPLAY_PATH=<replayPath> \
 *     pnpm exec vitest run test/workflow/machine.property.test.ts
 * (command sequences need the replayPath too; the seed alone re-runs and re-shrinks).
 */
import {
  type ActorKind,
  actorKinds,
  aggregateWorkflowState,
  applyTaskEvent,
  cancelWorkflowRun,
  createWorkflowRun,
  decideTaskEdge,
  type ErrorCategory,
  errorCategories,
  isAllowedEdge,
  type PlannedTransition,
  type ReasonCode,
  type RefusalCode,
  type RetryPolicy,
  type RunTask,
  reasonCodes,
  type StepInputCheck,
  type TaskEdge,
  type TaskEvent,
  type TaskSnapshot,
  type TaskState,
  taskStates,
  type WorkflowDefinition,
  type WorkflowRun,
  type WorkflowState,
  type WorkflowStep,
} from '@causeway/workflow/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isSpecRetryable,
  specActorKind,
  specActorKinds,
  specActorText,
  specAllowsEdge,
  specCancellers,
  specDeadReasons,
  specEdgeRows,
  specErrorCategories,
  specOrdinaryEdgeRows,
  specParentState,
  specReplayReasons,
  specRetryAtMs,
  specTaskStates,
  specTerminalStates,
} from '../helpers/contract-tables';
import {
  actorKindArbitrary,
  actorOf,
  backoffArbitrary,
  buildDefinition,
  commandsReplayPath,
  type EventSpec,
  errorCategoryArbitrary,
  eventKeys,
  eventNames,
  isReplaying,
  jitterArbitrary,
  keyBugMessage,
  numRuns,
  propertyParameters,
  taskIndexArbitrary,
  timeoutForRuns,
  type WorkflowSpec,
  workflowSpecArbitrary,
} from './arbitraries';
import { childTallyArbitrary } from './children-arbitraries';
import { EventStore, type ModelEvent } from './model-events';

// =============================================================================================
// Run statistics

/** Every (from, to, reason) the model runs have taken; used to prove the runs reach them all. */
const edgesSeen = new Set<string>();
const edgeKey = (from: TaskState | null, to: TaskState, reason: ReasonCode) =>
  `${from ?? '∅'} → ${to} (${reason})`;

// =============================================================================================
// Model and real system

/** The test's independent record of what happened. */
interface Model {
  readonly spec: WorkflowSpec;
  readonly definition: WorkflowDefinition;
  /** Step of each task id. */
  readonly stepOf: ReadonlyMap<string, WorkflowStep>;
  /** Every row ever emitted, in order (R24: append-only). */
  readonly log: PlannedTransition[];
  /** Each task's state, replayed from the log: the `to` of its last row (R25). */
  readonly states: Map<string, TaskState>;
  /** Each task's attempt, replayed from the log. */
  readonly attempts: Map<string, number>;
  /** Whether the current attempt persisted its effect-started marker (R10), as the engine knows. */
  readonly effectMarked: Map<string, boolean>;
  /** Tasks whose effect has recorded evidence (R21): it persists across attempts. */
  readonly evidenced: Set<string>;
  /** The parent's state, replayed from the workflow rows. */
  parent: WorkflowState;
  /** Each task's event, if its step is an event step (R37), from the spec. */
  readonly eventOf: ReadonlyMap<string, EventSpec | null>;
  /** R36: each task's own delay, from the spec. */
  readonly delayOf: ReadonlyMap<string, number>;
  /** The events sent so far, before and after the workflow's acceptance (R38). */
  readonly store: EventStore;
  /** R39: when each waiting task's wait gives up: its entry into `waiting` plus its timeout. */
  readonly waitGivesUpAt: Map<string, number>;
}

/** The system under test: the domain's run plus what the engine keeps around it. */
interface Real {
  run: WorkflowRun;
  /** Simulated database clock (R11); only moves forward. */
  nowMs: number;
  /** `lease_expires_at` per task (R7, R9): engine bookkeeping, not part of the machine. */
  readonly leaseExpiresAtMs: Map<string, number>;
}

type MachineCommand = fc.Command<Model, Real>;

const acceptedAtMs = Date.UTC(2030, 0, 1, 9, 0, 0);

/** An event sent before the workflow was accepted: kept, but never matched by its waits (R37). */
interface PriorEvent {
  readonly name: string;
  readonly key: string;
}

function setup(spec: WorkflowSpec, prior: readonly PriorEvent[]): { model: Model; real: Real } {
  const definition = buildDefinition(spec);
  const taskIds = definition.steps.map((step) => `task-${step.name}`);
  const specOf = (taskId: string) => {
    const found = spec.steps.find((stepSpec) => `task-${stepSpec.name}` === taskId);
    if (found === undefined) throw new Error(`no step spec for ${taskId}`);
    return found;
  };
  const created = createWorkflowRun(
    definition,
    { workflowId: 'wf-1', taskIds },
    new Date(acceptedAtMs),
    spec.submitDelayMs,
    keyCheck((taskId) => specOf(taskId).event),
  );
  const store = new EventStore(acceptedAtMs);
  prior.forEach((event, index) => {
    store.send(event.name, event.key, { kind: 'client' }, acceptedAtMs - 1_000 * (index + 1), null);
  });
  const model: Model = {
    spec,
    definition,
    stepOf: new Map(
      created.run.tasks.map((task) => [task.taskId, stepNamed(definition, task.step)]),
    ),
    log: [],
    states: new Map(),
    attempts: new Map(),
    effectMarked: new Map(),
    evidenced: new Set(),
    parent: 'queued',
    eventOf: new Map(taskIds.map((taskId) => [taskId, specOf(taskId).event])),
    delayOf: new Map(taskIds.map((taskId) => [taskId, specOf(taskId).delayMs ?? 0])),
    store,
    waitGivesUpAt: new Map(),
  };
  const real: Real = { run: created.run, nowMs: acceptedAtMs, leaseExpiresAtMs: new Map() };
  absorbCreation(model, real, created.transitions);
  return { model, real };
}

function stepNamed(definition: WorkflowDefinition, name: string): WorkflowStep {
  const found = definition.steps.find((step) => step.name === name);
  if (found === undefined) throw new Error(`no step ${name}`);
  return found;
}

// =============================================================================================
// Invariant checks

/** Cheap assertion for hot paths; the message is only built on failure. */
function invariant(condition: unknown, message: () => string): asserts condition {
  if (!condition) throw new Error(message());
}

/** A run as text: detects any change, including an in-place mutation of a "pure" input. */
function fingerprint(value: unknown): string {
  return JSON.stringify(value);
}

function describeRow(row: PlannedTransition): string {
  if (row.kind === 'workflow') return `workflow ${row.from} → ${row.to} (${row.reason})`;
  const { edge } = row;
  return `${row.step}: ${edge.from} → ${edge.to} (${edge.reason}) by ${edge.actor} attempt ${edge.attempt} category ${edge.errorCategory}`;
}

function upstreamStates(model: Model, taskId: string): TaskState[] {
  const step = model.stepOf.get(taskId) as WorkflowStep;
  return step.after.map((name) => model.states.get(`task-${name}`) as TaskState);
}

function snapshotIn(run: WorkflowRun, taskId: string): TaskSnapshot {
  const task = run.tasks.find((candidate) => candidate.taskId === taskId);
  if (task === undefined) throw new Error(`task ${taskId} disappeared from the run`);
  return task.snapshot;
}

/**
 * R58, as the engine reports it: an event step whose key function throws (`keyFails` in the
 * spec) has a problem; every other step has none. The test's stand-in for the engine.
 */
function keyCheck(eventOf: (taskId: string) => EventSpec | null | undefined): StepInputCheck {
  return (task: RunTask) =>
    eventOf(task.taskId)?.keyFails === true
      ? { input: 'event_key', category: 'unknown', summary: keyBugMessage }
      : null;
}

function keyFails(model: Model, taskId: string): boolean {
  return model.eventOf.get(taskId)?.keyFails === true;
}

/**
 * Where a task's creation edge takes it: pending behind its upstream steps, else queued, or
 * waiting (R37); a first event step whose key fails is created pending (no creation edge leads
 * to dead) and ends dead at once (R58).
 */
function creationState(model: Model, taskId: string): TaskState {
  if ((model.stepOf.get(taskId) as WorkflowStep).after.length > 0) return 'pending';
  if (model.eventOf.get(taskId) == null) return 'queued';
  return keyFails(model, taskId) ? 'pending' : 'waiting';
}

/** Where a new task is once the submit is done: its creation state, or dead (R58). */
function acceptedState(model: Model, taskId: string): TaskState {
  const created = creationState(model, taskId);
  const isRoot = (model.stepOf.get(taskId) as WorkflowStep).after.length === 0;
  return isRoot && created === 'pending' ? 'dead' : created;
}

/** Checks the creation rows (∅ → queued/pending/waiting) and seeds the model with them. */
function absorbCreation(model: Model, real: Real, rows: readonly PlannedTransition[]): void {
  const [workflowRow, ...taskRows] = rows;
  // The aggregation table decides the new parent too: `waiting` when only event steps can move.
  const parent = specParentState([...model.stepOf.keys()].map((id) => acceptedState(model, id)));
  invariant(
    workflowRow?.kind === 'workflow' && workflowRow.from === null && workflowRow.to === parent,
    () =>
      `a new workflow starts with its creation row ∅ → ${parent}, got ${fingerprint(workflowRow)}`,
  );
  model.log.push(workflowRow);
  model.parent = parent;
  const failedRoots = [...model.stepOf.keys()].filter(
    (id) => acceptedState(model, id) !== creationState(model, id),
  );
  invariant(
    taskRows.length === model.stepOf.size + failedRoots.length,
    () => `one submitted row per step and one per failed root, got ${taskRows.length}`,
  );
  const creationRows = taskRows.filter((row) => row.kind === 'task' && row.edge.from === null);
  for (const row of creationRows) {
    invariant(row.kind === 'task', () => `unexpected row ${describeRow(row)}`);
    const step = model.stepOf.get(row.taskId) as WorkflowStep;
    const expected = creationState(model, row.taskId);
    const { edge } = row;
    invariant(
      edge.from === null &&
        edge.to === expected &&
        edge.reason === 'submitted' &&
        edge.attempt === 0 &&
        specAllowsEdge(null, edge.to, edge.reason, specActorKind(edge.actor)),
      () =>
        `creation of ${step.name} should be ∅ → ${expected} (submitted), got ${describeRow(row)}`,
    );
    // R28/R29: the deadline counts from acceptance; the tighter of workflow and step wins.
    const stepDeadline = stepSpecOf(model, row.taskId).deadlineMs;
    const budgets = [model.spec.deadlineMs, stepDeadline].filter((ms) => ms !== null);
    const expectedDeadline = budgets.length === 0 ? null : acceptedAtMs + Math.min(...budgets);
    const snapshot = snapshotIn(real.run, row.taskId);
    const deadlineAt = snapshot.deadlineAt?.getTime() ?? null;
    invariant(
      deadlineAt === expectedDeadline,
      () => `${step.name}: deadline ${deadlineAt}, expected ${expectedDeadline}`,
    );
    if (expected === 'queued') {
      // R36: the submit's delay, then the step's own, both from acceptance; the edge says how long.
      const delayMs = model.spec.submitDelayMs + (model.delayOf.get(row.taskId) ?? 0);
      invariant(
        snapshot.runAt?.getTime() === acceptedAtMs + delayMs &&
          fingerprint(edge.detail) === fingerprint(delayMs > 0 ? { delayMs } : null),
        () =>
          `${step.name}: run_at ${snapshot.runAt?.toISOString()} detail ${fingerprint(edge.detail)}, expected a delay of ${delayMs} ms`,
      );
    }
    edgesSeen.add(edgeKey(edge.from, edge.to, edge.reason));
    model.log.push(row);
    model.states.set(row.taskId, edge.to);
    model.attempts.set(row.taskId, 0);
    model.effectMarked.set(row.taskId, false);
    startWait(model, row.taskId, edge.to, acceptedAtMs);
    if (failedRoots.includes(row.taskId)) {
      // R58: right after its creation row, the failed root's own row: pending → dead.
      const next = taskRows[taskRows.indexOf(row) + 1];
      invariant(
        next?.kind === 'task' && next.taskId === row.taskId,
        () => `${step.name}: a failed root's dead edge follows its creation row`,
      );
      checkInputFailed(next);
      edgesSeen.add(edgeKey(next.edge.from, next.edge.to, next.edge.reason));
      model.log.push(next);
      model.states.set(row.taskId, next.edge.to);
    }
  }
  checkRun(model, real);
  deliverKeptEvents(model, real, rows);
}

/** R58: pending → dead (step_input_failed) by the system, with the key function's error. */
function checkInputFailed(row: Extract<PlannedTransition, { kind: 'task' }>): void {
  const { edge } = row;
  invariant(
    edge.from === 'pending' &&
      edge.to === 'dead' &&
      edge.reason === 'step_input_failed' &&
      edge.actor === 'system' &&
      edge.errorCategory !== null &&
      edge.errorSummary?.includes(keyBugMessage) === true &&
      JSON.stringify(edge.detail).includes(keyBugMessage),
    () =>
      `${row.step}: a key that fails ends pending → dead with its error, got ${describeRow(row)}`,
  );
}

/** R39: a wait gives up its timeout after it starts; leaving `waiting` ends it. */
function startWait(model: Model, taskId: string, to: TaskState, nowMs: number): void {
  const waits = model.eventOf.get(taskId);
  if (to === 'waiting' && waits != null) model.waitGivesUpAt.set(taskId, nowMs + waits.timeoutMs);
  else model.waitGivesUpAt.delete(taskId);
}

function stepSpecOf(model: Model, taskId: string) {
  const found = model.spec.steps.find((stepSpec) => `task-${stepSpec.name}` === taskId);
  if (found === undefined) throw new Error(`no step spec for ${taskId}`);
  return found;
}

/**
 * R37: every wait the rows started (a creation, a promotion, a replay) takes the first kept
 * event of its name and key received after the workflow was accepted, if there is one — in
 * the same transaction, as the engine does, by the event's sender. Completing one may start
 * further waits (an event step after an event step); they are looked up in turn.
 */
function deliverKeptEvents(model: Model, real: Real, rows: readonly PlannedTransition[]): void {
  for (const row of rows) {
    if (row.kind !== 'task' || row.edge.to !== 'waiting') continue;
    const waits = model.eventOf.get(row.taskId);
    if (waits == null || model.states.get(row.taskId) !== 'waiting') continue;
    const kept = model.store.firstMatch(waits.name, waits.key);
    if (kept !== undefined) deliver(model, real, row.taskId, kept);
  }
}

/** One event delivered to a waiting task: it succeeds with it (R37), naming the event. */
function deliver(model: Model, real: Real, taskId: string, event: ModelEvent): void {
  const outcome = sendEvent(model, real, taskId, {
    type: 'event_received',
    actor: event.sender,
    eventId: event.id,
  });
  expectEdge(outcome, 'succeeded', 'event_received');
  invariant(
    fingerprint(outcome.edge.detail) === fingerprint({ eventId: event.id }),
    () => `event_received names ${fingerprint(outcome.edge.detail)}, not ${event.id}`,
  );
}

/** What caused a batch of rows: one task event, or a workflow cancel. */
type BatchCause =
  | { readonly kind: 'task'; readonly taskId: string }
  | { readonly kind: 'workflow_cancel'; readonly actor: string };

/**
 * Checks every row a single reducer call emitted, in order, and appends it to the model.
 * `before`/`after` are the runs on either side of the call.
 */
function absorbBatch(
  model: Model,
  before: WorkflowRun,
  after: WorkflowRun,
  rows: readonly PlannedTransition[],
  cause: BatchCause,
  nowMs: number,
): void {
  const touched = new Set<string>();
  rows.forEach((row, position) => {
    if (row.kind === 'workflow') {
      invariant(
        position === rows.length - 1,
        () => 'the workflow row is written last, after every task row of the same transaction',
      );
      // The parent's row names the cause: the batch's first edge, its reason and actor.
      const cause = rows[0];
      invariant(
        cause?.kind === 'task' &&
          row.step === cause.step &&
          row.reason === cause.edge.reason &&
          row.actor === cause.edge.actor,
        () => `${describeRow(row)} does not name its cause ${cause && describeRow(cause)}`,
      );
      absorbWorkflowRow(model, row);
      return;
    }
    // Each task takes at most one edge per transaction; follow-ups only touch pending tasks.
    invariant(!touched.has(row.taskId), () => `${row.step} got two edges in one command`);
    touched.add(row.taskId);
    const role =
      cause.kind === 'workflow_cancel'
        ? 'workflow_cancel'
        : position === 0 && row.taskId === cause.taskId
          ? 'direct'
          : 'follow_up';
    if (cause.kind === 'task' && position === 0) {
      invariant(
        row.taskId === cause.taskId,
        () => `the first row must be the target's edge, got ${describeRow(row)}`,
      );
    }
    checkTaskRow(
      model,
      row,
      snapshotIn(before, row.taskId),
      snapshotIn(after, row.taskId),
      role,
      nowMs,
    );
    if (role === 'workflow_cancel' && cause.kind === 'workflow_cancel') {
      invariant(
        row.edge.actor === cause.actor,
        () => `a workflow cancel acts as its caller, got ${describeRow(row)}`,
      );
    }
    model.log.push(row);
    model.states.set(row.taskId, row.edge.to);
    model.attempts.set(row.taskId, row.edge.attempt);
    if (row.edge.reason === 'lease_acquired') model.effectMarked.set(row.taskId, false);
    startWait(model, row.taskId, row.edge.to, nowMs);
  });
  const parent = specParentState([...model.states.values()]);
  if (!rows.some((row) => row.kind === 'workflow')) {
    invariant(
      parent === model.parent,
      () => `the parent changed ${model.parent} → ${parent} without a workflow transition`,
    );
  }
  // Every change is an edge: a task without a row in this batch is exactly as it was.
  for (const task of after.tasks) {
    if (touched.has(task.taskId)) continue;
    invariant(
      fingerprint(task.snapshot) === fingerprint(snapshotIn(before, task.taskId)),
      () => `${task.step} changed without an edge: ${fingerprint(task.snapshot)}`,
    );
  }
}

function absorbWorkflowRow(
  model: Model,
  row: Extract<PlannedTransition, { kind: 'workflow' }>,
): void {
  const children = [...model.states.values()];
  const expected = specParentState(children);
  invariant(
    row.from === model.parent,
    () => `${describeRow(row)} does not start from the current parent ${model.parent}`,
  );
  invariant(
    row.to === expected && row.to === aggregateWorkflowState(children) && row.to !== row.from,
    () =>
      `${describeRow(row)}: children ${children.join(',')} aggregate to ${expected} (the aggregation table (docs/state-machine.md))`,
  );
  // Succeeded and cancelled parents consist of terminal children that never change again.
  invariant(
    row.from !== 'succeeded' && row.from !== 'cancelled',
    () => `a ${row.from} workflow changed: ${describeRow(row)}`,
  );
  model.log.push(row);
  model.parent = row.to;
}

function checkTaskRow(
  model: Model,
  row: Extract<PlannedTransition, { kind: 'task' }>,
  previous: TaskSnapshot,
  next: TaskSnapshot,
  role: 'direct' | 'follow_up' | 'workflow_cancel',
  nowMs: number,
): void {
  const { edge } = row;
  const step = model.stepOf.get(row.taskId) as WorkflowStep;
  const what = () => describeRow(row);
  edgesSeen.add(edgeKey(edge.from, edge.to, edge.reason));
  // The log is a chain: each row starts where the previous row of the task ended (R25).
  invariant(
    edge.from === model.states.get(row.taskId),
    () => `${what()} but the log says ${model.states.get(row.taskId)}`,
  );
  // Invariant 1: only contract edges, checked against the code's table and the hand-written copy.
  const actorKind = specActorKind(edge.actor);
  invariant(
    isAllowedEdge(edge.from, edge.to, edge.reason, actorKind),
    () => `${what()} is not in the code's edge table`,
  );
  invariant(
    specAllowsEdge(edge.from, edge.to, edge.reason, actorKind),
    () => `${what()} is not an edge of the edge table (docs/state-machine.md)`,
  );
  const waits = model.eventOf.get(row.taskId) ?? null;
  // Invariant 2: terminal states change only through the operator's edges out of dead: an
  // event step waits again, any other step is queued (R39).
  if (edge.from !== null && specTerminalStates.includes(edge.from)) {
    invariant(
      edge.from === 'dead' &&
        edge.to === (waits === null ? 'queued' : 'waiting') &&
        specReplayReasons.includes(edge.reason) &&
        actorKind === 'operator',
      () => `terminal state changed by ${what()}`,
    );
  }
  invariant(edge.to !== 'leased' || edge.from === 'queued', () => `leased entered by ${what()}`);
  // R58: a wait nothing can match never starts; only a failing key ends a step this way.
  invariant(!(waits?.keyFails === true && edge.to === 'waiting'), () => `${what()}: its key fails`);
  invariant(
    edge.reason !== 'step_input_failed' || waits?.keyFails === true,
    () => `${what()}: its key did not fail`,
  );
  // R37: an event step runs no code: it is never queued, leased or awaiting a receipt; a step
  // that runs code never waits for an event.
  const eventStepStates: readonly TaskState[] = [
    'pending',
    'waiting',
    'succeeded',
    'cancelled',
    'dead',
  ];
  invariant(
    waits === null ? edge.to !== 'waiting' : eventStepStates.includes(edge.to),
    () => `${what()} for a ${waits === null ? 'step that runs code' : 'event step'}`,
  );
  // Invariant 5: a step leaves pending only when every upstream step succeeded (checked at
  // this point of the log, not after the whole batch).
  if (
    edge.from === 'pending' &&
    (edge.to === 'queued' || edge.to === 'waiting' || edge.reason === 'step_input_failed')
  ) {
    invariant(
      upstreamStates(model, row.taskId).every((state) => state === 'succeeded'),
      () => `${what()} while upstream is ${upstreamStates(model, row.taskId).join(',')}`,
    );
  }
  if (role === 'follow_up') {
    // What a reducer does on its own: promote (all upstream succeeded) or cascade a cancel
    // (an upstream step was cancelled or asked to stop). Never anything else, never from a
    // dead upstream.
    // R58: an event step whose key fails never waits; it ends dead with the error.
    if (waits?.keyFails === true && edge.to === 'dead') checkInputFailed(row);
    const promoted =
      edge.actor === 'system' &&
      (waits === null
        ? edge.to === 'queued' && edge.reason === 'upstream_succeeded'
        : waits.keyFails
          ? edge.to === 'dead' && edge.reason === 'step_input_failed'
          : edge.to === 'waiting' && edge.reason === 'event_awaited');
    const upstream = upstreamStates(model, row.taskId);
    const cascaded =
      edge.to === 'cancelled' &&
      edge.reason === 'cancelled_before_start' &&
      (upstream.includes('cancelled') || upstream.includes('cancel_requested'));
    invariant(edge.from === 'pending' && (promoted || cascaded), () => `follow-up ${what()}`);
  }
  if (role === 'workflow_cancel') {
    // R12/R13/R39: pending/queued → cancelled, waiting → cancelled, leased → cancel_requested;
    // the rest untouched.
    const expected: Partial<Record<TaskState, readonly [TaskState, ReasonCode]>> = {
      pending: ['cancelled', 'cancelled_before_start'],
      queued: ['cancelled', 'cancelled_before_start'],
      waiting: ['cancelled', 'cancelled_while_waiting'],
      leased: ['cancel_requested', 'cancel_requested'],
      awaiting_children: ['cancel_requested', 'cancel_requested'],
    };
    const [to, reason] = (edge.from === null ? undefined : expected[edge.from]) ?? [];
    invariant(edge.to === to && edge.reason === reason, () => `workflow cancel took ${what()}`);
  }
  // Invariant 7: every dead carries its reason and the last error category (R18).
  if (edge.to === 'dead') {
    invariant(
      specDeadReasons.includes(edge.reason) &&
        edge.errorCategory !== null &&
        next.lastErrorCategory !== null,
      () => `${what()} lacks a dead reason or an error category`,
    );
  }
  // R10/R31/R35, whoever sends the event: once the attempt persisted its effect marker, a
  // shutdown never hands it back, and a lease expiry never re-runs or "cancels" a
  // non-reentrant step (uncertainty ends in dead).
  if (model.effectMarked.get(row.taskId) === true) {
    invariant(edge.reason !== 'worker_shutdown', () => `${what()} after the effect started`);
    // Evidence (R21) makes a re-run safe: it asks for the outcome instead of resubmitting.
    invariant(
      step.policy.reentrant || model.evidenced.has(row.taskId) || edge.reason !== 'lease_expired',
      () => `${what()} for a non-reentrant step whose effect started`,
    );
  }
  // Attempts move only on a claim (+1) and a replay (fresh budget). A shutdown release hands
  // back an attempt that did nothing; the contract is silent on whether it counts, so both are fine.
  const previousAttempt = model.attempts.get(row.taskId) as number;
  const allowedAttempts =
    edge.reason === 'lease_acquired'
      ? [previousAttempt + 1]
      : specReplayReasons.includes(edge.reason)
        ? [0]
        : edge.reason === 'worker_shutdown'
          ? [previousAttempt, previousAttempt - 1]
          : edge.reason === 'snoozed'
            ? [previousAttempt - 1] // R36: a snooze is not counted as an attempt
            : [previousAttempt];
  invariant(
    allowedAttempts.includes(edge.attempt),
    () =>
      `${what()}: attempt ${edge.attempt}, expected one of ${allowedAttempts} (was ${previousAttempt})`,
  );
  // Invariant 6: attempts never exceed the step's limit.
  invariant(
    edge.attempt >= 0 && edge.attempt <= step.policy.maxAttempts,
    () => `${what()}: attempt outside 0..${step.policy.maxAttempts}`,
  );
  // The snapshot after the row is the row (R25), and only a replay resets the budget (R29).
  invariant(
    previous.state === edge.from && next.state === edge.to && next.attempt === edge.attempt,
    () => `${what()} but the snapshot went ${previous.state} → ${next.state} (${next.attempt})`,
  );
  if (specReplayReasons.includes(edge.reason)) {
    invariant(
      next.replayCount === previous.replayCount + 1,
      () => `${what()}: replay count ${previous.replayCount} → ${next.replayCount}`,
    );
  } else {
    invariant(
      next.replayCount === previous.replayCount &&
        next.deadlineAt?.getTime() === previous.deadlineAt?.getTime(),
      () => `${what()} changed the replay count or refreshed the deadline`,
    );
  }
  // R3/R4: every queued entry has a run_at, never in the past.
  if (edge.to === 'queued') {
    invariant(
      next.runAt !== null && next.runAt.getTime() >= nowMs,
      () => `${what()}: run_at ${next.runAt?.toISOString()} is before now`,
    );
  }
  // R36: a ready step is queued its delay after its upstream steps succeeded, and the edge
  // says until when.
  if (edge.reason === 'upstream_succeeded') {
    const delayMs = model.delayOf.get(row.taskId) ?? 0;
    const runAt = new Date(nowMs + delayMs);
    invariant(
      next.runAt?.getTime() === runAt.getTime() &&
        (delayMs === 0 ||
          (edge.detail as { runAt?: unknown } | null)?.runAt === runAt.toISOString()),
      () =>
        `${what()}: run_at ${next.runAt?.toISOString()} detail ${fingerprint(edge.detail)}, expected ${delayMs} ms from now`,
    );
  }
  if (edge.errorCategory !== null) {
    invariant(
      next.lastErrorCategory === edge.errorCategory,
      () => `${what()}: last error category ${next.lastErrorCategory}`,
    );
  }
}

/** Whole-run invariants, checked after every command. */
function checkRun(model: Model, real: Real): void {
  const { run } = real;
  invariant(run.tasks.length === model.stepOf.size, () => 'tasks appeared or disappeared');
  const children = run.tasks.map((task) => task.snapshot.state);
  for (const task of run.tasks) {
    const { snapshot } = task;
    const step = model.stepOf.get(task.taskId) as WorkflowStep;
    const where = `${task.step} (${snapshot.state})`;
    // Invariant 3 (R25): the state is the `to` of the task's last row in the log.
    invariant(
      snapshot.state === model.states.get(task.taskId),
      () => `${where}: the log says ${model.states.get(task.taskId)}`,
    );
    invariant(
      snapshot.attempt === model.attempts.get(task.taskId),
      () => `${where}: attempt ${snapshot.attempt}, log says ${model.attempts.get(task.taskId)}`,
    );
    // Invariant 6.
    invariant(
      snapshot.attempt <= step.policy.maxAttempts,
      () => `${where}: attempt ${snapshot.attempt} > maxAttempts ${step.policy.maxAttempts}`,
    );
    if (snapshot.state === 'leased' || snapshot.state === 'cancel_requested') {
      invariant(snapshot.attempt >= 1, () => `${where} without an attempt`);
      invariant(
        snapshot.effectStarted === model.effectMarked.get(task.taskId),
        () =>
          `${where}: effectStarted ${snapshot.effectStarted}, but the engine persisted ${model.effectMarked.get(task.taskId)}`,
      );
    }
    // Invariant 7.
    if (snapshot.state === 'dead') {
      invariant(snapshot.lastErrorCategory !== null, () => `${where} without an error category`);
    }
    if (snapshot.state === 'queued') {
      invariant(snapshot.runAt !== null, () => `${where} without run_at`);
    }
    // R39: a wait gives up its timeout after it began (a replay begins a fresh one); a task
    // that does not wait has no wait to give up.
    const givesUpAt = snapshot.state === 'waiting' ? model.waitGivesUpAt.get(task.taskId) : null;
    invariant(
      (snapshot.waitTimeoutAt?.getTime() ?? null) === givesUpAt,
      () =>
        `${where}: wait gives up at ${snapshot.waitTimeoutAt?.toISOString()}, expected ${givesUpAt}`,
    );
    // Invariant 5, converse: promotion is immediate, and a cancel cascades to pending steps.
    if (snapshot.state === 'pending') {
      const upstream = upstreamStates(model, task.taskId);
      invariant(
        !upstream.every((state) => state === 'succeeded'),
        () => `${where} although every upstream step succeeded`,
      );
      invariant(
        !upstream.includes('cancelled') && !upstream.includes('cancel_requested'),
        () =>
          `${where} although an upstream step was cancelled (or asked to stop) and it can never run`,
      );
    }
  }
  // Invariant 4: the parent is the contract's aggregation, by both implementations and the log.
  const expected = specParentState(children);
  invariant(
    aggregateWorkflowState(children) === expected,
    () =>
      `aggregateWorkflowState(${children.join(',')}) = ${aggregateWorkflowState(children)}, the aggregation table (docs/state-machine.md) says ${expected}`,
  );
  invariant(
    run.state === expected && model.parent === expected,
    () =>
      `parent ${run.state} (log: ${model.parent}) but children ${children.join(',')} → ${expected}`,
  );
}

// =============================================================================================
// Driving the reducer

type Outcome =
  | {
      readonly ok: true;
      readonly before: TaskSnapshot;
      readonly edge: TaskEdge;
      readonly after: TaskSnapshot;
    }
  | { readonly ok: false; readonly before: TaskSnapshot; readonly code: RefusalCode };

/** Applies one event to one task through `applyTaskEvent` and checks everything it emitted. */
function sendEvent(
  model: Model,
  real: Real,
  taskId: string,
  event: TaskEvent,
  jitter = 0.5,
): Outcome {
  const run = real.run;
  const before = snapshotIn(run, taskId);
  const printed = fingerprint(run);
  const decision = applyTaskEvent(
    model.definition,
    run,
    taskId,
    event,
    { now: new Date(real.nowMs), random: () => jitter },
    keyCheck((id) => model.eventOf.get(id)),
  );
  // The reducer is pure: whatever it decides, the run it was given is untouched.
  invariant(fingerprint(run) === printed, () => `applyTaskEvent(${event.type}) mutated its input`);
  if (!decision.ok) {
    // A refusal changes nothing and emits nothing: the real system keeps the same run.
    invariant(
      decision.refusal.state === before.state,
      () => `refusal reports ${decision.refusal.state} for a ${before.state} task`,
    );
    checkRun(model, real);
    return { ok: false, before, code: decision.refusal.code };
  }
  invariant(decision.transitions.length > 0, () => `accepted ${event.type} emitted no transition`);
  absorbBatch(model, run, decision.run, decision.transitions, { kind: 'task', taskId }, real.nowMs);
  real.run = decision.run;
  checkRun(model, real);
  const first = decision.transitions[0] as Extract<PlannedTransition, { kind: 'task' }>;
  // R24: the row names who took the edge, in the contract's actor text: the event's sender,
  // or the system where the edge table says the system takes it (a claim past its deadline).
  const sender =
    !('actor' in event) || first.edge.reason === 'deadline_exceeded_before_start'
      ? 'system'
      : specActorText(event.actor);
  invariant(first.edge.actor === sender, () => `${describeRow(first)}, sent by ${sender}`);
  // The waits this event started look for the events kept for them (R37).
  deliverKeptEvents(model, real, decision.transitions);
  return { ok: true, before, edge: first.edge, after: snapshotIn(decision.run, taskId) };
}

/** Cancels the whole workflow through `cancelWorkflowRun` and checks everything it emitted. */
function sendWorkflowCancel(model: Model, real: Real, actorKind: ActorKind): number {
  const run = real.run;
  const printed = fingerprint(run);
  const actor = actorOf(actorKind);
  const result = cancelWorkflowRun(model.definition, run, actor, {
    now: new Date(real.nowMs),
    random: () => 0.5,
  });
  invariant(fingerprint(run) === printed, () => 'cancelWorkflowRun mutated its input');
  absorbBatch(
    model,
    run,
    result.run,
    result.transitions,
    { kind: 'workflow_cancel', actor: specActorText(actor) },
    real.nowMs,
  );
  invariant(
    result.transitions.length > 0 || fingerprint(result.run) === printed,
    () => 'a workflow cancel without transitions changed the run',
  );
  real.run = result.run;
  checkRun(model, real);
  return result.transitions.length;
}

function expectEdge(
  outcome: Outcome,
  to: TaskState,
  reasons: ReasonCode | readonly ReasonCode[],
): asserts outcome is Extract<Outcome, { ok: true }> {
  const allowed = typeof reasons === 'string' ? [reasons] : reasons;
  invariant(
    outcome.ok && outcome.edge.to === to && allowed.includes(outcome.edge.reason),
    () =>
      `from ${outcome.before.state} expected → ${to} (${allowed.join(' or ')}), got ${
        outcome.ok ? `→ ${outcome.edge.to} (${outcome.edge.reason})` : `refusal ${outcome.code}`
      }`,
  );
}

function expectRefused(outcome: Outcome, code?: RefusalCode): void {
  invariant(
    !outcome.ok && (code === undefined || outcome.code === code),
    () =>
      `from ${outcome.before.state} expected a refusal${code ? ` (${code})` : ''}, got ${
        outcome.ok ? `→ ${outcome.edge.to} (${outcome.edge.reason})` : outcome.code
      }`,
  );
}

function deadlineReached(snapshot: TaskSnapshot, nowMs: number): boolean {
  return snapshot.deadlineAt !== null && nowMs >= snapshot.deadlineAt.getTime();
}

function policyOf(model: Model, taskId: string): RetryPolicy {
  return (model.stepOf.get(taskId) as WorkflowStep).policy;
}

/**
 * R17/R18/R28 for a failure that may be retried: dead when the attempts are used up or the
 * next run would start after the deadline, otherwise queued at the jittered backoff, never
 * before Retry-After. The expected time is the contract's formula (`specRetryAtMs`), not the
 * machine's own `nextRunAt`, so a wrong backoff shows here too.
 */
function expectRetryOrDead(
  outcome: Outcome,
  policy: RetryPolicy,
  nowMs: number,
  jitter: number,
  retryAfterMs: number | undefined,
  category: ErrorCategory,
  reasons: { retry: ReasonCode; exhausted: ReasonCode; pastDeadline: ReasonCode },
): void {
  const { before } = outcome;
  if (before.attempt >= policy.maxAttempts) {
    expectEdge(outcome, 'dead', reasons.exhausted);
  } else {
    // R18 as the contract words it, not the code's `nextRunAt`.
    const runAt = specRetryAtMs(nowMs, before.attempt, policy.backoff, jitter, {
      category,
      retryAfterMs,
    });
    if (before.deadlineAt !== null && runAt >= before.deadlineAt.getTime()) {
      expectEdge(outcome, 'dead', reasons.pastDeadline);
    } else {
      expectEdge(outcome, 'queued', reasons.retry);
      const floor = retryAfterMs ?? 0;
      const ceiling = floor + policy.backoff.maximumIntervalMs;
      const at = outcome.after.runAt?.getTime() ?? Number.NaN;
      invariant(
        at === runAt && at >= nowMs + floor && at <= nowMs + ceiling,
        () => `retry at ${at - nowMs} ms, expected ${runAt - nowMs} ms (≤ ${ceiling})`,
      );
      // R51: the retry edge says why it waits.
      const asked = outcome.ok ? outcome.edge.detail?.retryAfterMs : undefined;
      invariant(
        asked === retryAfterMs,
        () => `retry edge detail.retryAfterMs ${String(asked)}, expected ${String(retryAfterMs)}`,
      );
    }
  }
  invariant(
    !outcome.ok || outcome.edge.errorCategory === category,
    () => `expected error category ${category}, got ${outcome.ok && outcome.edge.errorCategory}`,
  );
}

function moveClockTo(real: Real, ms: number): void {
  real.nowMs = Math.max(real.nowMs, ms);
}

function markEffectStarted(model: Model, real: Real, taskId: string, evidence?: string): void {
  // The engine persists the marker with a fenced write (R7) that only a live lease can make.
  if (snapshotIn(real.run, taskId).state !== 'leased') return;
  real.run = {
    ...real.run,
    tasks: real.run.tasks.map((task) =>
      task.taskId === taskId
        ? {
            ...task,
            snapshot: {
              ...task.snapshot,
              effectStarted: true,
              ...(evidence === undefined ? {} : { evidence }),
            },
          }
        : task,
    ),
  };
  model.effectMarked.set(taskId, true);
  if (evidence !== undefined) model.evidenced.add(taskId);
  checkRun(model, real);
}

// =============================================================================================
// Commands

/**
 * How a command picks its task: usually among the tasks in a state where the command means
 * something (so runs make progress), sometimes any task at all (so refusals are exercised).
 */
interface Target {
  readonly index: number;
  readonly anyState: boolean;
}

const targetArbitrary: fc.Arbitrary<Target> = fc.record({
  index: taskIndexArbitrary,
  // One time in four.
  anyState: fc.integer({ min: 0, max: 3 }).map((roll) => roll === 0),
});

function pickTask(real: Real, target: Target, relevant: readonly TaskState[]): RunTask {
  const { tasks } = real.run;
  const candidates = target.anyState
    ? tasks
    : tasks.filter((task) => relevant.includes(task.snapshot.state));
  const pool = candidates.length === 0 ? tasks : candidates;
  return pool[target.index % pool.length] as RunTask;
}

function command(label: string, execute: (model: Model, real: Real) => void): MachineCommand {
  return {
    check: () => true,
    run: (model, real) => {
      execute(model, real);
      checkNoEventMissed(model);
    },
    toString: () => label,
  };
}

/**
 * R37/R38, after every command: no task still waits for an event that was kept for it — one
 * received after the workflow was accepted, of its name and key.
 */
function checkNoEventMissed(model: Model): void {
  for (const [taskId, state] of model.states) {
    const waits = model.eventOf.get(taskId);
    if (state !== 'waiting' || waits == null) continue;
    const kept = model.store.firstMatch(waits.name, waits.key);
    invariant(kept === undefined, () => `${taskId} still waits although ${kept?.id} came for it`);
  }
}

const show = (target: Target) => `#${target.index}${target.anyState ? '*' : ''}`;

/**
 * A worker claims a task; the engine only sees it once run_at has come (R4), so it usually
 * waits for it. An early claim (a delayed step, a backoff, a snooze not yet due) is refused.
 */
const claimCommand = fc
  .record({
    target: targetArbitrary,
    actor: actorKindArbitrary('worker'),
    early: fc.integer({ min: 0, max: 4 }).map((roll) => roll === 0),
  })
  .map(({ target, actor, early }) =>
    command(`claim(${show(target)}${early ? ', early' : ''}) by ${actor}`, (model, real) => {
      const task = pickTask(real, target, ['queued']);
      const runAt = task.snapshot.runAt;
      const due = runAt === null || runAt.getTime() <= real.nowMs;
      if (task.snapshot.state === 'queued' && runAt !== null && !early) {
        moveClockTo(real, runAt.getTime());
      }
      const outcome = sendEvent(model, real, task.taskId, { type: 'claim', actor: actorOf(actor) });
      if (actor !== 'worker') {
        invariant(!outcome.ok || outcome.edge.to !== 'leased', () => `${actor} took a lease`);
        return;
      }
      if (outcome.before.state !== 'queued') return expectRefused(outcome);
      // R4: only `run_at <= now` can be leased (R36: a timer is not due before its time).
      if (early && !due) return expectRefused(outcome, 'not_ready');
      if (deadlineReached(outcome.before, real.nowMs)) {
        // R28: work whose deadline passed before it started is finalized, never run.
        return expectEdge(outcome, 'dead', 'deadline_exceeded_before_start');
      }
      expectEdge(outcome, 'leased', 'lease_acquired');
      invariant(!outcome.after.effectStarted, () => 'a new attempt starts without the marker');
      real.leaseExpiresAtMs.set(task.taskId, real.nowMs + model.spec.leaseMs);
    }),
  );

/** R9: renewal is a conditional update of lease_expires_at, never an edge. */
const renewCommand = targetArbitrary.map((target) =>
  command(`renew(${show(target)})`, (model, real) => {
    const task = pickTask(real, target, ['leased']);
    const printed = fingerprint(real.run);
    const logLength = model.log.length;
    if (task.snapshot.state === 'leased') {
      real.leaseExpiresAtMs.set(task.taskId, real.nowMs + model.spec.leaseMs);
    }
    invariant(
      fingerprint(real.run) === printed && model.log.length === logLength,
      () => 'renewal changed the task or wrote a transition',
    );
    checkRun(model, real);
  }),
);

const completeCommand = fc
  .record({ target: targetArbitrary, actor: actorKindArbitrary('worker') })
  .map(({ target, actor }) =>
    command(`complete(${show(target)}) by ${actor}`, (model, real) => {
      const task = pickTask(real, target, ['leased', 'cancel_requested']);
      const outcome = sendEvent(model, real, task.taskId, {
        type: 'complete',
        actor: actorOf(actor),
      });
      // R14: under a cancel request the cancel did not catch the effect, and the edge says so.
      const { state } = outcome.before;
      const reason: ReasonCode | null =
        state === 'leased'
          ? 'completed'
          : state === 'cancel_requested'
            ? 'cancel_after_submit'
            : null;
      // The edge table's actor column says who may take it (the system too, for R46's).
      if (reason === null || !specAllowsEdge(state, 'succeeded', reason, actor)) {
        return expectRefused(outcome);
      }
      expectEdge(outcome, 'succeeded', reason);
    }),
  );

/** What a worker reports when an attempt fails (a thrown error or the attempt timeout). */
function failTask(
  model: Model,
  real: Real,
  taskId: string,
  failure: {
    category: ErrorCategory;
    retryAfterMs: number | undefined;
    jitter: number;
    actor: ActorKind;
  },
): void {
  const { category, retryAfterMs, jitter, actor } = failure;
  const outcome = sendEvent(
    model,
    real,
    taskId,
    {
      type: 'fail',
      actor: actorOf(actor),
      category,
      summary: `${category} failure`,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    },
    jitter,
  );
  if (actor !== 'worker') return;
  const { before } = outcome;
  if (before.state === 'cancel_requested') {
    // No further attempt will run, so the failure itself confirms the cancel; a
    // non-retryable error still ends in dead (the edge table (docs/state-machine.md) cancel_requested rows).
    if (isSpecRetryable(category)) expectEdge(outcome, 'cancelled', 'cancel_confirmed');
    else expectEdge(outcome, 'dead', 'non_retryable_error');
  } else if (before.state !== 'leased') {
    expectRefused(outcome);
  } else if (deadlineReached(before, real.nowMs)) {
    expectEdge(outcome, 'dead', 'deadline_exceeded');
  } else if (!isSpecRetryable(category)) {
    expectEdge(outcome, 'dead', 'non_retryable_error');
  } else {
    expectRetryOrDead(
      outcome,
      policyOf(model, taskId),
      real.nowMs,
      jitter,
      retryAfterMs,
      category,
      {
        retry: 'retry_scheduled',
        exhausted: 'attempts_exhausted',
        pastDeadline: 'deadline_exceeded',
      },
    );
  }
}

const failCommand = fc
  .record({
    target: targetArbitrary,
    category: errorCategoryArbitrary,
    // What a StepError may carry (R51): none, or 1 ms to 24 h.
    retryAfterMs: fc.option(fc.integer({ min: 1, max: 86_400_000 }), { nil: undefined }),
    jitter: jitterArbitrary,
    actor: actorKindArbitrary('worker'),
  })
  .map(({ target, ...failure }) =>
    command(
      `fail(${show(target)}, ${failure.category}, retryAfter ${failure.retryAfterMs}, jitter ${failure.jitter}) by ${failure.actor}`,
      (model, real) => {
        const task = pickTask(real, target, ['leased', 'cancel_requested']);
        failTask(model, real, task.taskId, failure);
      },
    ),
  );

/** R28: the attempt ran for its whole timeout; the worker fails it with `timeout`. */
const attemptTimeoutCommand = fc
  .record({ target: targetArbitrary, jitter: jitterArbitrary })
  .map(({ target, jitter }) =>
    command(`attemptTimeout(${show(target)}, jitter ${jitter})`, (model, real) => {
      const task = pickTask(real, target, ['leased', 'cancel_requested']);
      if (task.snapshot.state === 'leased' || task.snapshot.state === 'cancel_requested') {
        real.nowMs += policyOf(model, task.taskId).timeoutMs;
      }
      failTask(model, real, task.taskId, {
        category: 'timeout',
        retryAfterMs: undefined,
        jitter,
        actor: 'worker',
      });
    }),
  );

/** R10: the sweeper finds an expired lease (the clock moves to lease_expires_at if needed). */
function expireLease(model: Model, real: Real, taskId: string, jitter: number, actor: ActorKind) {
  const { state } = snapshotIn(real.run, taskId);
  const expiresAt = real.leaseExpiresAtMs.get(taskId);
  const holdsLease = state === 'leased' || state === 'cancel_requested';
  if (holdsLease && expiresAt !== undefined) moveClockTo(real, expiresAt);
  const outcome = sendEvent(
    model,
    real,
    taskId,
    { type: 'lease_expired', actor: actorOf(actor) },
    jitter,
  );
  if (actor !== 'sweeper') return;
  const policy = policyOf(model, taskId);
  const marked = model.effectMarked.get(taskId) === true;
  const uncertain = marked && !policy.reentrant && !model.evidenced.has(taskId);
  if (outcome.before.state === 'leased') {
    // R10/R35: a non-reentrant step that started its effect is never re-run blindly.
    if (uncertain) return expectEdge(outcome, 'dead', 'lease_expired_effect_uncertain');
    return expectRetryOrDead(outcome, policy, real.nowMs, jitter, undefined, 'unknown', {
      retry: 'lease_expired',
      exhausted: 'attempts_exhausted',
      pastDeadline: 'deadline_exceeded',
    });
  }
  if (outcome.before.state === 'cancel_requested') {
    if (!marked) return expectEdge(outcome, 'cancelled', 'lease_expired');
    // the edge table (docs/state-machine.md): → cancelled by lease expiry only when no effect started. Once one started,
    // even a reentrant step can promise neither "no effect" nor a re-run: a human decides.
    return expectEdge(outcome, 'dead', 'lease_expired_effect_uncertain');
  }
  expectRefused(outcome);
}

const leaseExpiryCommand = fc
  .record({
    target: targetArbitrary,
    jitter: jitterArbitrary,
    actor: actorKindArbitrary('sweeper'),
  })
  .map(({ target, jitter, actor }) =>
    command(`leaseExpiry(${show(target)}, jitter ${jitter}) by ${actor}`, (model, real) => {
      const task = pickTask(real, target, ['leased', 'cancel_requested']);
      expireLease(model, real, task.taskId, jitter, actor);
    }),
  );

/**
 * R16/R10: a worker is killed after its step persisted the effect marker, maybe while a cancel
 * was being requested; only the sweeper can settle the task. (A scenario that independent
 * commands rarely line up by chance.)
 */
const workerKilledCommand = fc
  .record({ target: targetArbitrary, cancelFirst: fc.boolean(), jitter: jitterArbitrary })
  .map(({ target, cancelFirst, jitter }) =>
    command(
      `workerKilled(${show(target)}, effect started${cancelFirst ? ', cancel requested' : ''}, jitter ${jitter})`,
      (model, real) => {
        const task = pickTask(real, target, ['leased']);
        markEffectStarted(model, real, task.taskId);
        if (cancelFirst) {
          const outcome = sendEvent(model, real, task.taskId, {
            type: 'cancel',
            actor: actorOf('client'),
          });
          if (outcome.before.state === 'leased') {
            expectEdge(outcome, 'cancel_requested', 'cancel_requested');
          }
        }
        expireLease(model, real, task.taskId, jitter, 'sweeper');
      },
    ),
  );

/** The step persisted its "effect started" marker (ctx.checkpoint), R10. Not an edge. */
const effectStartedCommand = targetArbitrary.map((target) =>
  command(`effectStarted(${show(target)})`, (model, real) => {
    const task = pickTask(real, target, ['leased']);
    const logLength = model.log.length;
    markEffectStarted(model, real, task.taskId);
    invariant(model.log.length === logLength, () => 'the effect marker wrote a transition');
  }),
);

/** ctx.recordEvidence(id): the effect marker plus the external acceptance id (R21). Not an edge. */
const recordEvidenceCommand = targetArbitrary.map((target) =>
  command(`recordEvidence(${show(target)})`, (model, real) => {
    const task = pickTask(real, target, ['leased']);
    const logLength = model.log.length;
    markEffectStarted(model, real, task.taskId, `acceptance-${task.taskId}`);
    invariant(model.log.length === logLength, () => 'recording evidence wrote a transition');
  }),
);

/** ctx.boundary(): confirms a pending cancel (R13), otherwise persists the effect marker. */
const boundaryCommand = fc
  .record({ target: targetArbitrary, actor: actorKindArbitrary('worker') })
  .map(({ target, actor }) =>
    command(`boundary(${show(target)}) by ${actor}`, (model, real) => {
      const task = pickTask(real, target, ['leased', 'cancel_requested']);
      const outcome = sendEvent(model, real, task.taskId, {
        type: 'boundary',
        actor: actorOf(actor),
      });
      if (actor !== 'worker') return;
      if (outcome.before.state === 'cancel_requested') {
        return expectEdge(outcome, 'cancelled', 'cancel_confirmed');
      }
      expectRefused(outcome);
      if (outcome.before.state === 'leased') markEffectStarted(model, real, task.taskId);
    }),
  );

/** R12/R13/R15: cancel a task, then cancel it again: the repeat changes nothing. */
const cancelTaskCommand = fc
  .record({ target: targetArbitrary, actor: actorKindArbitrary(...specCancellers) })
  .map(({ target, actor }) =>
    command(`cancelTask(${show(target)}) ×2 by ${actor}`, (model, real) => {
      // Mostly leased or waiting tasks: cancelling pending ones mostly just ends the run early.
      const task = pickTask(real, target, ['leased', 'waiting']);
      const first = sendEvent(model, real, task.taskId, { type: 'cancel', actor: actorOf(actor) });
      const logLength = model.log.length;
      const second = sendEvent(model, real, task.taskId, { type: 'cancel', actor: actorOf(actor) });
      // Invariant 8: a repeated cancel emits no new edge.
      expectRefused(second);
      invariant(model.log.length === logLength, () => 'the repeated cancel wrote a transition');
      if (!specCancellers.includes(actor)) return expectRefused(first);
      switch (first.before.state) {
        case 'pending':
        case 'queued':
          return expectEdge(first, 'cancelled', 'cancelled_before_start');
        case 'waiting':
          // R39: no lease and no effect in flight: the wait simply ends.
          return expectEdge(first, 'cancelled', 'cancelled_while_waiting');
        case 'leased':
          return expectEdge(first, 'cancel_requested', 'cancel_requested');
        case 'cancel_requested':
          return expectRefused(first, 'cancel_already_requested');
        default:
          return expectRefused(first);
      }
    }),
  );

/**
 * R52: a debounced submit supersedes a task of a workflow that never started; a task that was
 * claimed before (attempt or replay count above 0) is started and refuses.
 */
const supersedeCommand = fc
  .record({ target: targetArbitrary, actor: actorKindArbitrary('client') })
  .map(({ target, actor }) =>
    command(`supersede(${show(target)}) by ${actor}`, (model, real) => {
      const task = pickTask(real, target, ['queued', 'pending']);
      const by = `workflow-after-${model.log.length}`;
      const outcome = sendEvent(model, real, task.taskId, {
        type: 'supersede',
        actor: actorOf(actor),
        by,
      });
      const { state, attempt, replayCount } = outcome.before;
      if (actor !== 'client' || (state !== 'queued' && state !== 'pending')) {
        return expectRefused(outcome);
      }
      if (attempt > 0 || replayCount > 0) return expectRefused(outcome, 'already_started');
      expectEdge(outcome, 'cancelled', 'superseded');
      const detail = outcome.ok ? outcome.edge.detail : null;
      invariant(
        detail?.supersededBy === by,
        () => `the superseded edge names ${String(detail?.supersededBy)}, not ${by}`,
      );
    }),
  );

/** Cancel the whole workflow twice: the second call emits nothing (invariant 8). */
const cancelWorkflowCommand = actorKindArbitrary(...specCancellers).map((actor) =>
  command(`cancelWorkflow() ×2 by ${actor}`, (model, real) => {
    sendWorkflowCancel(model, real, actor);
    const printed = fingerprint(real.run);
    const repeated = sendWorkflowCancel(model, real, actor);
    invariant(
      repeated === 0 && fingerprint(real.run) === printed,
      () => `the repeated workflow cancel emitted ${repeated} rows`,
    );
    if (specCancellers.includes(actor)) {
      const stoppable = real.run.tasks.filter((task) =>
        ['pending', 'queued', 'waiting', 'leased'].includes(task.snapshot.state),
      );
      invariant(
        stoppable.length === 0,
        () => `after a workflow cancel ${stoppable.map((task) => task.step)} can still run`,
      );
    }
  }),
);

type ReceiptOutcome =
  | { readonly kind: 'confirmed' }
  | { readonly kind: 'rejected'; readonly category: ErrorCategory }
  | { readonly kind: 'timeout' };

const receiptOutcomeArbitrary: fc.Arbitrary<ReceiptOutcome> = fc.oneof(
  fc.constant({ kind: 'confirmed' } as const),
  errorCategoryArbitrary.map((category) => ({ kind: 'rejected', category }) as const),
  fc.constant({ kind: 'timeout' } as const),
);

/** R23: the receipt (or the sweeper's receipt deadline) settles an awaiting task. */
const receiptCommand = fc
  .record({
    target: targetArbitrary,
    receipt: receiptOutcomeArbitrary,
    jitter: jitterArbitrary,
    // Mostly the contract's actor for the outcome, sometimes any actor.
    odd: fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 9 },
      { arbitrary: fc.constantFrom(...specActorKinds), weight: 1 },
    ),
  })
  .map(({ target, receipt, jitter, odd }) => {
    const natural: ActorKind = receipt.kind === 'timeout' ? 'sweeper' : 'receipt';
    const actor = odd ?? natural;
    const label = receipt.kind === 'rejected' ? `rejected ${receipt.category}` : receipt.kind;
    return command(
      `receipt(${show(target)}, ${label}, jitter ${jitter}) by ${actor}`,
      (model, real) => {
        const task = pickTask(real, target, ['awaiting_receipt']);
        const event: TaskEvent =
          receipt.kind === 'confirmed'
            ? { type: 'receipt_confirmed', actor: actorOf(actor) }
            : receipt.kind === 'rejected'
              ? {
                  type: 'receipt_rejected',
                  actor: actorOf(actor),
                  category: receipt.category,
                  summary: 'the platform rejected it',
                }
              : { type: 'receipt_timeout', actor: actorOf(actor) };
        const outcome = sendEvent(model, real, task.taskId, event, jitter);
        if (actor !== natural) return;
        if (outcome.before.state !== 'awaiting_receipt') return expectRefused(outcome);
        const policy = policyOf(model, task.taskId);
        if (receipt.kind === 'confirmed')
          return expectEdge(outcome, 'succeeded', 'receipt_confirmed');
        if (receipt.kind === 'rejected') {
          if (!isSpecRetryable(receipt.category)) {
            return expectEdge(outcome, 'dead', 'receipt_rejected');
          }
          return expectRetryOrDead(
            outcome,
            policy,
            real.nowMs,
            jitter,
            undefined,
            receipt.category,
            {
              retry: 'receipt_rejected',
              exhausted: 'receipt_rejected',
              pastDeadline: 'receipt_rejected',
            },
          );
        }
        // A missing receipt leaves the effect uncertain: a non-reentrant step is never re-run
        // blindly (R35), a reentrant one may be.
        if (!policy.reentrant) return expectEdge(outcome, 'dead', 'receipt_timeout');
        expectRetryOrDead(outcome, policy, real.nowMs, jitter, undefined, 'timeout', {
          retry: 'receipt_timeout',
          exhausted: 'receipt_timeout',
          pastDeadline: 'receipt_timeout',
        });
      },
    );
  });

/** The step returned awaitReceipt(...) (worker) or its send(...) went out (outbox), R22/R23. */
const awaitReceiptCommand = fc
  .record({ target: targetArbitrary, actor: actorKindArbitrary('worker', 'outbox') })
  .map(({ target, actor }) =>
    command(`awaitReceipt(${show(target)}) by ${actor}`, (model, real) => {
      const task = pickTask(real, target, ['leased', 'cancel_requested']);
      const outcome = sendEvent(model, real, task.taskId, {
        type: 'await_receipt',
        actor: actorOf(actor),
      });
      if (actor !== 'worker' && actor !== 'outbox') return;
      if (outcome.before.state === 'leased') {
        return expectEdge(outcome, 'awaiting_receipt', 'submitted_awaiting_receipt');
      }
      // the edge table (docs/state-machine.md): cancel_requested → awaiting_receipt (cancel_after_submit) is a worker edge.
      if (outcome.before.state === 'cancel_requested' && actor === 'worker') {
        return expectEdge(outcome, 'awaiting_receipt', 'cancel_after_submit');
      }
      expectRefused(outcome);
    }),
  );

/** R26: an operator replays a dead task, with a name and a reason (or fails to give them). */
const replayCommand = fc
  .record({
    target: targetArbitrary,
    actor: actorKindArbitrary('operator'),
    // Three times in four the operator gives a name.
    named: fc.integer({ min: 0, max: 3 }).map((roll) => roll !== 0),
    reason: fc.constantFrom('the platform is back', 'checked by hand: nothing was sent', '', '  '),
  })
  .map(({ target, actor, named, reason }) =>
    command(
      `replay(${show(target)}, ${named ? 'named' : 'anonymous'}, ${JSON.stringify(reason)}) by ${actor}`,
      (model, real) => {
        const task = pickTask(real, target, ['dead']);
        const operator = named ? actorOf(actor) : { kind: actor };
        const outcome = sendEvent(model, real, task.taskId, {
          type: 'replay',
          actor: operator,
          reason,
          bulk: false,
        });
        const valid = actor === 'operator' && named && reason.trim() !== '';
        if (!valid || outcome.before.state !== 'dead') return expectRefused(outcome);
        // R58: waiting again on a key that still fails would be a wait nothing can match.
        if (keyFails(model, task.taskId)) return expectRefused(outcome, 'step_input_failed');
        // R39: a replayed event step waits again, with a fresh timeout (checked by checkRun).
        expectEdge(outcome, replayedState(model, task.taskId), 'manual_replay');
        invariant(
          outcome.after.attempt === 0 && !outcome.after.effectStarted,
          () => 'a replay starts a fresh attempt budget',
        );
      },
    ),
  );

/** R26: bulk requeue of every dead task, optionally only those dead for one reason code. */
const bulkRequeueCommand = fc
  .option(fc.constantFrom(...specDeadReasons), { nil: undefined })
  .map((onlyReason) =>
    command(`bulkRequeue(${onlyReason ?? 'all'})`, (model, real) => {
      const lastReason = (taskId: string) => {
        const last = model.log.findLast((row) => row.kind === 'task' && row.taskId === taskId);
        return last?.kind === 'task' ? last.edge.reason : undefined;
      };
      const chosen = real.run.tasks
        .filter((task) => task.snapshot.state === 'dead')
        .filter((task) => onlyReason === undefined || lastReason(task.taskId) === onlyReason)
        .map((task) => task.taskId);
      for (const taskId of chosen) {
        const outcome = sendEvent(model, real, taskId, {
          type: 'replay',
          actor: actorOf('operator'),
          reason: 'requeue after the outage',
          bulk: true,
        });
        if (keyFails(model, taskId)) expectRefused(outcome, 'step_input_failed');
        else expectEdge(outcome, replayedState(model, taskId), 'bulk_requeue');
      }
      const left = chosen.filter(
        (taskId) => model.states.get(taskId) === 'dead' && !keyFails(model, taskId),
      );
      invariant(left.length === 0, () => `bulk requeue left ${left} dead`);
    }),
  );

/** Where a replay takes a dead task (R39): an event step waits again, any other is queued. */
function replayedState(model: Model, taskId: string): TaskState {
  return model.eventOf.get(taskId) == null ? 'queued' : 'waiting';
}

/**
 * R28/R39: time passes the target's deadline, then every queued and waiting task is told
 * about it.
 */
const deadlinePassesCommand = fc
  .record({ target: targetArbitrary, extraMs: fc.integer({ min: 0, max: 2_000 }) })
  .map(({ target, extraMs }) =>
    command(`deadlinePasses(${show(target)}, +${extraMs} ms)`, (model, real) => {
      const withDeadline = real.run.tasks.filter((task) => task.snapshot.deadlineAt !== null);
      const task = pickTask(real, target, ['queued', 'pending', 'waiting']);
      const deadline = (
        task.snapshot.deadlineAt ?? withDeadline[0]?.snapshot.deadlineAt
      )?.getTime();
      if (deadline !== undefined) moveClockTo(real, deadline + extraMs);
      for (const { taskId } of real.run.tasks) {
        const { state } = snapshotIn(real.run, taskId);
        if (state !== 'queued' && state !== 'waiting') continue;
        expectDeadlineOutcome(
          sendEvent(model, real, taskId, {
            type: 'deadline_passed',
            actor: { kind: 'sweeper', name: 'sweeper-1' },
          }),
          real,
        );
      }
    }),
  );

/** `deadline_passed` sent now, to any task: only a queued or waiting task past its deadline dies. */
const deadlineCheckCommand = targetArbitrary.map((target) =>
  command(`deadlineCheck(${show(target)})`, (model, real) => {
    const task = pickTask(real, target, ['queued', 'waiting']);
    expectDeadlineOutcome(
      sendEvent(model, real, task.taskId, {
        type: 'deadline_passed',
        actor: { kind: 'sweeper', name: 'sweeper-1' },
      }),
      real,
    );
  }),
);

function expectDeadlineOutcome(outcome: Outcome, real: Real): void {
  if (outcome.before.state === 'queued' && deadlineReached(outcome.before, real.nowMs)) {
    expectEdge(outcome, 'dead', 'deadline_exceeded_before_start');
    invariant(
      outcome.edge.errorCategory === 'timeout' && specActorKind(outcome.edge.actor) === 'system',
      () => `deadline edge by ${outcome.edge.actor} with ${outcome.edge.errorCategory}`,
    );
    return;
  }
  if (outcome.before.state === 'waiting' && deadlineReached(outcome.before, real.nowMs)) {
    // R39: the workflow's absolute deadline ends a wait too; the sweeper takes the edge.
    expectEdge(outcome, 'dead', 'deadline_exceeded');
    invariant(
      outcome.edge.errorCategory === 'timeout' && specActorKind(outcome.edge.actor) === 'sweeper',
      () => `deadline edge by ${outcome.edge.actor} with ${outcome.edge.errorCategory}`,
    );
    return;
  }
  expectRefused(outcome);
}

/** R31: at shutdown a worker releases the tasks whose effect has not started. */
const releaseCommand = fc
  .record({ target: targetArbitrary, actor: actorKindArbitrary('worker') })
  .map(({ target, actor }) =>
    command(`release(${show(target)}) by ${actor}`, (model, real) => {
      const task = pickTask(real, target, ['leased', 'cancel_requested']);
      const outcome = sendEvent(model, real, task.taskId, {
        type: 'release',
        actor: actorOf(actor),
      });
      if (actor !== 'worker') return;
      const marked = model.effectMarked.get(task.taskId) === true;
      const { state } = outcome.before;
      if ((state === 'leased' || state === 'cancel_requested') && marked) {
        // Only lease expiry may settle an attempt that started its effect.
        return expectRefused(outcome, 'effect_started');
      }
      if (state === 'leased') return expectEdge(outcome, 'queued', 'worker_shutdown');
      if (state === 'cancel_requested') return expectEdge(outcome, 'cancelled', 'cancel_confirmed');
      expectRefused(outcome);
    }),
  );

/**
 * R36: a running step asks to run again later. Leased: queued (`snoozed`) until then, the
 * attempt handed back, the time and reason on the edge; past the deadline: dead
 * (`deadline_exceeded`). Under a cancel request it is a boundary: cancelled. Else refused.
 */
const snoozeCommand = fc
  .record({
    target: targetArbitrary,
    actor: actorKindArbitrary('worker'),
    forMs: fc.integer({ min: 1, max: 90_000 }),
  })
  .map(({ target, actor, forMs }) =>
    command(`snooze(${show(target)}, ${forMs} ms) by ${actor}`, (model, real) => {
      const task = pickTask(real, target, ['leased', 'cancel_requested']);
      const previousAttempt = snapshotIn(real.run, task.taskId).attempt;
      const outcome = sendEvent(model, real, task.taskId, {
        type: 'snooze',
        actor: actorOf(actor),
        forMs,
        untilMs: null,
        reason: 'not ready yet',
      });
      if (actor !== 'worker') return;
      const { state, deadlineAt } = outcome.before;
      if (state === 'cancel_requested') return expectEdge(outcome, 'cancelled', 'cancel_confirmed');
      if (state !== 'leased') return expectRefused(outcome);
      const until = real.nowMs + forMs;
      if (deadlineAt !== null && until >= deadlineAt.getTime()) {
        return expectEdge(outcome, 'dead', 'deadline_exceeded');
      }
      expectEdge(outcome, 'queued', 'snoozed');
      invariant(
        outcome.after.runAt?.getTime() === until &&
          outcome.edge.attempt === previousAttempt - 1 &&
          JSON.stringify(outcome.edge.detail) ===
            JSON.stringify({ runAt: new Date(until).toISOString(), reason: 'not ready yet' }),
        () => `snoozed to ${outcome.after.runAt?.toISOString()} (attempt ${outcome.edge.attempt})`,
      );
    }),
  );

type EventSend = 'matching' | 'unmatched' | 'duplicate';

/**
 * R38: an event arrives. `matching` takes the (name, key) of an event step — a waiting one, or
 * (`*`) any, so the event may come before the step waits (R37: it is kept for it); `unmatched`
 * a key no step waits for; `duplicate` the (name, key) and idempotency key of an event sent
 * before (without a key, a repeat is a new event). The sender is a client or an operator;
 * rarely another actor, whose deliveries the edge table decides (such a sender stores nothing:
 * only clients and operators send events). With `*` the event is also delivered late to a task
 * that no longer waits: refused.
 */
const sendEventCommand = fc
  .record({
    send: fc.constantFrom<EventSend>('matching', 'matching', 'matching', 'unmatched', 'duplicate'),
    target: targetArbitrary,
    sender: actorKindArbitrary('client', 'operator'),
    keyed: fc.boolean(),
  })
  .map(({ send, target, sender, keyed }) =>
    command(
      `sendEvent(${send} ${show(target)}${keyed ? ', keyed' : ''}) by ${sender}`,
      (model, real) => {
        const { name, key, idempotencyKey } = eventToSend(model, real, send, target, keyed);
        const actor = actorOf(sender);
        const waiting = real.run.tasks
          .map((task) => task.taskId)
          .filter((taskId) => {
            const waits = model.eventOf.get(taskId);
            return (
              model.states.get(taskId) === 'waiting' && waits?.name === name && waits.key === key
            );
          });
        if (sender !== 'client' && sender !== 'operator') {
          // Straight to the machine: the edge table says whether this actor may take the edge.
          for (const taskId of waiting) {
            const outcome = sendEvent(model, real, taskId, {
              type: 'event_received',
              actor,
              eventId: 'event-unsent',
            });
            if (specAllowsEdge('waiting', 'succeeded', 'event_received', sender)) {
              expectEdge(outcome, 'succeeded', 'event_received');
            } else expectRefused(outcome, 'actor_not_allowed');
          }
          return;
        }
        const printed = fingerprint(real.run);
        const logLength = model.log.length;
        const sent = model.store.send(name, key, actor, real.nowMs, idempotencyKey);
        if (!sent.stored) {
          // R38: idempotent by its key: the repeat writes nothing and completes nothing.
          invariant(
            fingerprint(real.run) === printed && model.log.length === logLength,
            () => 'a repeated send changed the run',
          );
          return;
        }
        // R38: every task waiting for it, in the send's transaction; a task not waiting for
        // this name and key gets nothing (its wait, if it starts later, may still take it).
        for (const taskId of waiting) deliver(model, real, taskId, sent.event);
        if (target.anyState) {
          const late = real.run.tasks.find((task) => task.snapshot.state !== 'waiting');
          if (late !== undefined) {
            const outcome = sendEvent(model, real, late.taskId, {
              type: 'event_received',
              actor,
              eventId: sent.event.id,
            });
            expectRefused(outcome);
          }
        }
      },
    ),
  );

/** The name, key and idempotency key a send uses (see `sendEventCommand`). */
function eventToSend(
  model: Model,
  real: Real,
  send: EventSend,
  target: Target,
  keyed: boolean,
): { name: string; key: string; idempotencyKey: string | null } {
  const fresh = keyed ? `send-${model.store.events.length + 1}` : null;
  const fallback = {
    name: eventNames[target.index % eventNames.length] as string,
    key: eventKeys[target.index % eventKeys.length] as string,
  };
  if (send === 'duplicate') {
    const earlier = model.store.events.filter((event) => event.atMs >= acceptedAtMs);
    const again = earlier[target.index % Math.max(1, earlier.length)];
    if (again !== undefined) {
      return { name: again.name, key: again.key, idempotencyKey: again.idempotencyKey };
    }
    return { ...fallback, idempotencyKey: fresh };
  }
  if (send === 'unmatched') {
    return { name: fallback.name, key: 'k-nobody-waits', idempotencyKey: fresh };
  }
  const eventSteps = real.run.tasks.filter((task) => model.eventOf.get(task.taskId) != null);
  const waiting = eventSteps.filter((task) => task.snapshot.state === 'waiting');
  const pool = target.anyState || waiting.length === 0 ? eventSteps : waiting;
  const chosen = pool[target.index % Math.max(1, pool.length)];
  const waits = chosen === undefined ? undefined : model.eventOf.get(chosen.taskId);
  return { ...(waits ?? fallback), idempotencyKey: fresh };
}

/**
 * R39's sweeper, for the tasks that only time moves: a queued or waiting task past its
 * deadline, a wait past its timeout. Both orders of the two checks (the contract does not
 * say which comes first when both passed) must end a wait exactly once.
 */
function sweepWaits(model: Model, real: Real, deadlineFirst: boolean, actor: ActorKind): void {
  const sweeper = actorOf('sweeper');
  for (const { taskId } of real.run.tasks) {
    for (const check of deadlineFirst ? ['deadline', 'timeout'] : ['timeout', 'deadline']) {
      const state = model.states.get(taskId);
      if (state !== 'queued' && state !== 'waiting') continue;
      if (check === 'deadline') {
        const event: TaskEvent = { type: 'deadline_passed', actor: sweeper };
        expectDeadlineOutcome(sendEvent(model, real, taskId, event), real);
      } else if (state === 'waiting') {
        // The model's own time of giving up, as it was before the event.
        const givesUpAt = model.waitGivesUpAt.get(taskId);
        const event: TaskEvent = { type: 'wait_timeout', actor: actorOf(actor) };
        const outcome = sendEvent(model, real, taskId, event);
        expectWaitTimeoutOutcome(model, taskId, givesUpAt, outcome, real, actor);
      }
    }
  }
}

/** R39: past its timeout a wait ends with its `onTimeout` output, else dead (`event_timeout`). */
function expectWaitTimeoutOutcome(
  model: Model,
  taskId: string,
  givesUpAt: number | undefined,
  outcome: Outcome,
  real: Real,
  actor: ActorKind,
): void {
  const waits = model.eventOf.get(taskId);
  // Before its time (or once it stopped waiting) the sweeper's view is stale: nothing happens.
  if (outcome.before.state !== 'waiting' || givesUpAt === undefined || waits == null) {
    expectRefused(outcome);
    return;
  }
  if (real.nowMs < givesUpAt) {
    expectRefused(outcome);
    return;
  }
  const to: TaskState = waits.onTimeout ? 'succeeded' : 'dead';
  if (!specAllowsEdge('waiting', to, 'event_timeout', actor)) {
    expectRefused(outcome, 'actor_not_allowed');
    return;
  }
  expectEdge(outcome, to, 'event_timeout');
}

/**
 * Time passes up to a wait's timeout (a millisecond before, at it, or after it) and the
 * sweeper runs (`sweepWaits`); mostly as the sweeper, sometimes as another actor.
 */
const waitTimeoutCommand = fc
  .record({
    target: targetArbitrary,
    offsetMs: fc.constantFrom(-1, 0, 1, 700, 5_000),
    deadlineFirst: fc.boolean(),
    actor: actorKindArbitrary('sweeper'),
  })
  .map(({ target, offsetMs, deadlineFirst, actor }) =>
    command(
      `waitTimeout(${show(target)}, ${offsetMs >= 0 ? '+' : ''}${offsetMs} ms, ${deadlineFirst ? 'deadline first' : 'timeout first'}) by ${actor}`,
      (model, real) => {
        const task = pickTask(real, target, ['waiting']);
        const givesUpAt = model.waitGivesUpAt.get(task.taskId);
        if (givesUpAt !== undefined) moveClockTo(real, givesUpAt + offsetMs);
        sweepWaits(model, real, deadlineFirst, actor);
      },
    ),
  );

const advanceClockCommand = fc.integer({ min: 1, max: 10_000 }).map((ms) =>
  command(`advanceClock(+${ms} ms)`, (model, real) => {
    real.nowMs += ms;
    checkRun(model, real);
  }),
);

/** Weighted so that runs get deep into the machine: claims and settles are the most common. */
const machineCommandArbitrary: fc.Arbitrary<MachineCommand> = fc.oneof(
  { arbitrary: claimCommand, weight: 10 },
  { arbitrary: renewCommand, weight: 1 },
  { arbitrary: completeCommand, weight: 5 },
  { arbitrary: failCommand, weight: 5 },
  { arbitrary: attemptTimeoutCommand, weight: 2 },
  { arbitrary: leaseExpiryCommand, weight: 4 },
  { arbitrary: workerKilledCommand, weight: 2 },
  { arbitrary: effectStartedCommand, weight: 4 },
  { arbitrary: recordEvidenceCommand, weight: 2 },
  { arbitrary: boundaryCommand, weight: 3 },
  { arbitrary: cancelTaskCommand, weight: 3 },
  { arbitrary: cancelWorkflowCommand, weight: 1 },
  { arbitrary: supersedeCommand, weight: 1 },
  { arbitrary: receiptCommand, weight: 5 },
  { arbitrary: awaitReceiptCommand, weight: 4 },
  { arbitrary: replayCommand, weight: 4 },
  { arbitrary: bulkRequeueCommand, weight: 1 },
  { arbitrary: deadlinePassesCommand, weight: 1 },
  { arbitrary: deadlineCheckCommand, weight: 1 },
  { arbitrary: releaseCommand, weight: 2 },
  { arbitrary: snoozeCommand, weight: 2 },
  { arbitrary: sendEventCommand, weight: 5 },
  { arbitrary: waitTimeoutCommand, weight: 4 },
  { arbitrary: advanceClockCommand, weight: 3 },
);

const maxCommands = 100;

/** Events sent before the workflow was accepted, of the names and keys its steps wait for. */
const priorEventsArbitrary: fc.Arbitrary<PriorEvent[]> = fc.array(
  fc.record({ name: fc.constantFrom(...eventNames), key: fc.constantFrom(...eventKeys) }),
  { maxLength: 3 },
);

// =============================================================================================
// Properties

describe('task machine: model-based', () => {
  it(
    'every command sequence keeps the contract invariants (edges, terminals, R25, parent, promotion, attempts, dead, idempotent cancel)',
    () => {
      fc.assert(
        fc.property(
          workflowSpecArbitrary,
          priorEventsArbitrary,
          fc.commands([machineCommandArbitrary], {
            maxCommands,
            // Without it fast-check's default size caps sequences at ~10 commands.
            size: 'max',
            ...(commandsReplayPath === undefined ? {} : { replayPath: commandsReplayPath }),
          }),
          (spec, prior, commands) => {
            fc.modelRun(() => setup(spec, prior), commands);
          },
        ),
        propertyParameters(),
      );
      // The invariants are only worth something if the runs reach the edges they guard: with
      // 1,000+ fresh runs every (from, to, reason) of the edge table (docs/state-machine.md) must
      // have been taken, but those of child workflows (children-machine.property.test.ts).
      const replaying = isReplaying || numRuns < 1_000;
      const missing = specOrdinaryEdgeRows.flatMap((row) =>
        row.to.flatMap((to) =>
          row.reasons
            .map((reason) => edgeKey(row.from, to, reason))
            .filter((key) => !edgesSeen.has(key)),
        ),
      );
      if (!replaying)
        expect(
          missing,
          'the edge table (docs/state-machine.md) edges never reached by the model runs',
        ).toEqual([]);
    },
    timeoutForRuns(40),
  );
});

describe('edge table', () => {
  it("lists exactly the contract's states, R17 categories and actor kinds, and at least its reason codes", () => {
    expect([...taskStates]).toEqual([...specTaskStates]);
    expect([...errorCategories].sort()).toEqual([...specErrorCategories].sort());
    expect([...actorKinds].sort()).toEqual([...specActorKinds].sort());
    const specReasons = new Set(specEdgeRows.flatMap((row) => row.reasons));
    expect([...specReasons].filter((reason) => !reasonCodes.includes(reason))).toEqual([]);
  });

  it('allows exactly the edges of the edge table (docs/state-machine.md), cell by cell (code table vs. hand-written copy)', () => {
    const differences: string[] = [];
    for (const from of [null, ...taskStates]) {
      for (const to of taskStates) {
        for (const reason of reasonCodes) {
          for (const actor of new Set([...actorKinds, ...specActorKinds])) {
            const code = isAllowedEdge(from, to, reason, actor);
            const spec = specAllowsEdge(from, to, reason, actor);
            if (code !== spec) {
              differences.push(
                `${edgeKey(from, to, reason)} by ${actor}: code ${code ? 'allows' : 'refuses'}, contract ${spec ? 'allows' : 'refuses'}`,
              );
            }
          }
        }
      }
    }
    expect(differences).toEqual([]);
  });
});

// =============================================================================================
// decideTaskEdge from any snapshot, including ones no run reaches

const anySnapshotArbitrary: fc.Arbitrary<TaskSnapshot> = fc.record({
  state: fc.constantFrom(...taskStates),
  attempt: fc.integer({ min: 0, max: 5 }),
  effectStarted: fc.boolean(),
  evidence: fc.option(fc.constant('acceptance-1'), { nil: null }),
  replayCount: fc.integer({ min: 0, max: 3 }),
  runAt: fc.option(
    fc.integer({ min: 0, max: 60_000 }).map((ms) => new Date(acceptedAtMs + ms)),
    {
      nil: null,
    },
  ),
  deadlineAt: fc.option(
    fc.integer({ min: 0, max: 60_000 }).map((ms) => new Date(acceptedAtMs + ms)),
    { nil: null },
  ),
  lastErrorCategory: fc.option(fc.constantFrom(...specErrorCategories), { nil: null }),
  lastError: fc.option(fc.constant('earlier failure'), { nil: null }),
  waitTimeoutAt: fc.option(
    fc.integer({ min: 0, max: 60_000 }).map((ms) => new Date(acceptedAtMs + ms)),
    { nil: null },
  ),
});

const anyPolicyArbitrary: fc.Arbitrary<RetryPolicy> = fc
  .record({
    maxAttempts: fc.integer({ min: 1, max: 4 }),
    backoff: backoffArbitrary,
    reentrant: fc.boolean(),
    timeoutMs: fc.integer({ min: 1, max: 5_000 }),
    deadlineMs: fc.constant(null),
    delayMs: fc.constant(null),
    wait: fc.option(
      fc.record({
        timeoutMs: fc.integer({ min: 1, max: 60_000 }),
        succeedsOnTimeout: fc.boolean(),
      }),
      { nil: null },
    ),
    // A map step (R44) never waits for an event.
    map: fc.boolean(),
  })
  .map((policy) => (policy.map ? { ...policy, wait: null } : policy));

const anyActorArbitrary = fc.constantFrom(...specActorKinds).map(actorOf);

const anyEventArbitrary: fc.Arbitrary<TaskEvent> = fc.oneof(
  fc.constant({ type: 'promote' } as const),
  fc.constant({ type: 'deadline_passed', actor: { kind: 'sweeper', name: 'sweeper-1' } } as const),
  fc
    .record({
      type: fc.constantFrom(
        'claim',
        'complete',
        'await_receipt',
        'lease_expired',
        'release',
        'boundary',
        'cancel',
        'receipt_confirmed',
        'receipt_timeout',
      ),
      actor: anyActorArbitrary,
    })
    .map((event) => event as TaskEvent),
  fc.record({
    type: fc.constant('fail' as const),
    actor: anyActorArbitrary,
    category: errorCategoryArbitrary,
    summary: fc.constant('failed'),
    retryAfterMs: fc.integer({ min: 0, max: 5_000 }),
  }),
  fc.record({
    type: fc.constant('receipt_rejected' as const),
    actor: anyActorArbitrary,
    category: errorCategoryArbitrary,
    summary: fc.constant('rejected'),
  }),
  fc.record({
    type: fc.constant('replay' as const),
    actor: anyActorArbitrary,
    reason: fc.constantFrom('why not', ''),
    bulk: fc.boolean(),
  }),
  fc.record({
    type: fc.constant('start_children' as const),
    actor: anyActorArbitrary,
    count: fc.integer({ min: 0, max: 5 }),
  }),
  fc.record({
    type: fc.constant('children_changed' as const),
    actor: anyActorArbitrary,
    tally: childTallyArbitrary,
  }),
);

describe('decideTaskEdge: any snapshot, any event, any actor', () => {
  it(
    'refuses or takes a the edge table (docs/state-machine.md) edge; terminals only leave by replay; dead always has a category',
    () => {
      fc.assert(
        fc.property(
          anySnapshotArbitrary,
          anyPolicyArbitrary,
          anyEventArbitrary,
          fc.integer({ min: 0, max: 60_000 }),
          jitterArbitrary,
          // R58: what the engine found wrong with the step's event key, if anything.
          fc.option(
            fc.constant({
              input: 'event_key',
              category: 'unknown',
              summary: keyBugMessage,
            } as const),
            { nil: null },
          ),
          // R47: whether a dead step started child workflows.
          fc.boolean(),
          (task, policy, event, elapsedMs, jitter, inputProblem, hasChildren) => {
            const decision = decideTaskEdge({
              task,
              policy,
              event,
              now: new Date(acceptedAtMs + elapsedMs),
              random: () => jitter,
              inputProblem,
              hasChildren,
            });
            if (!decision.ok) {
              expect(decision.refusal.state).toBe(task.state);
              return;
            }
            const { edge, next } = decision;
            const actor = specActorKind(edge.actor);
            expect(edge.from).toBe(task.state);
            expect(next.state).toBe(edge.to);
            expect(next.attempt).toBe(edge.attempt);
            expect(
              specAllowsEdge(edge.from, edge.to, edge.reason, actor),
              `${edgeKey(edge.from, edge.to, edge.reason)} by ${actor}`,
            ).toBe(true);
            if (specTerminalStates.includes(task.state)) {
              expect(specReplayReasons).toContain(edge.reason);
            }
            if (edge.to === 'dead') {
              expect(edge.errorCategory).not.toBeNull();
              expect(next.lastErrorCategory).not.toBeNull();
            }
            // R58: a key that fails never starts a wait, a list that fails never starts children.
            if (inputProblem !== null && policy.wait !== null) expect(edge.to).not.toBe('waiting');
            if (inputProblem !== null && policy.map && ['promote', 'replay'].includes(event.type)) {
              expect(edge.to).not.toBe('awaiting_children');
            }
            if (event.type === 'replay') {
              // R26: a replay names its operator and gives a reason.
              expect(event.actor.kind).toBe('operator');
              expect(event.actor.name).toBeTruthy();
              expect(event.reason.trim()).not.toBe('');
            }
          },
        ),
        propertyParameters(),
      );
    },
    timeoutForRuns(5),
  );
});
