/**
 * The harness of the engine model test (engine-model.property.test.ts and the command files
 * beside it): the command base class that runs a command and then compares the whole run
 * with the model, the comparisons of log rows, task rows and answers, the tally of edges
 * reached, and small helpers to pick a task and hold a claim's fence (R7).
 */
import type { TaskState } from '@causeway/workflow';
import type fc from 'fast-check';
import { expect } from 'vitest';
import { applyEvents } from '../../packages/engine/src/runtime/decision/apply-events';
import type { EventRequest } from '../../packages/engine/src/runtime/decision/event-request';
import type { EngineModel, LogRow, ModelOutcome, ModelTask } from './model-state';
import { type DbRow, databaseNow, type RealSystem, type TaskRow } from './model-system';
import { workerHolders } from './model-workflows';
export type Command = fc.AsyncCommand<EngineModel, RealSystem>;

export const terminalStates: readonly TaskState[] = ['succeeded', 'cancelled', 'dead'];

/** The appended rows equal the model's planned rows, in order; all at `at` when given. */
export function expectRows(
  label: string,
  actual: readonly DbRow[],
  expected: readonly LogRow[],
  at?: Date,
) {
  expect(
    actual.map(({ at: _at, ...row }) => row),
    `${label}: transition rows`,
  ).toEqual(expected);
  if (at !== undefined) {
    for (const row of actual) expect(row.at, `${label}: transition time`).toEqual(at);
  }
  // R47: a replay's own restarts, or a straggler's, started again as its cancel ends.
  const replaying = actual.some(
    (row) => row.from_state === 'dead' && row.to_state === 'awaiting_children',
  );
  for (const row of actual) {
    const kind = row.task_id === null ? 'workflow' : 'task';
    const edge = `${kind} ${row.from_state ?? '∅'} → ${row.to_state} (${row.reason})`;
    tally(edge);
    // Edges a step takes on its children (R43, R45), and the ones its children decide (R46).
    const by = row.actor.split(':')[0];
    if (kind === 'task' && (by === 'parent' || by === 'system')) tally(`${edge} by ${by}`);
    // R47: a child its step's failure cancelled, started again by the step's replay.
    if (kind === 'workflow' && (row.detail as { replaces?: unknown } | null)?.replaces) {
      tally('child workflow started again (replaces)');
      if (!replaying) tally('child workflow started again as its cancel ends (replaces)');
    }
  }
}

/** How often each edge and each non-edge outcome was reached (CAUSEWAY_FC_STATS=1 prints it). */
export const reached = new Map<string, number>();

export function tally(what: string) {
  reached.set(what, (reached.get(what) ?? 0) + 1);
}

/** Every workflow and task of the run in the database (plain SQL) equals the model. */
export async function compareWithModel(model: EngineModel, system: RealSystem, label: string) {
  const [states, tasks] = await Promise.all([system.workflowStates(), system.tasks()]);
  expect(states.size, `${label}: workflows`).toBe(model.workflows.length);
  for (const workflow of model.workflows) {
    expect(states.get(workflow.id), `${label}: ${workflow.definition.name} ${workflow.id}`).toBe(
      workflow.parent,
    );
  }
  const byId = new Map<string, TaskRow>(tasks.map((task) => [task.id, task]));
  const modelTasks = model.tasks();
  expect(tasks.length, `${label}: tasks`).toBe(modelTasks.length);
  for (const expected of modelTasks) {
    expect(byId.get(expected.task.taskId), `${label}: task ${expected.task.step}`).toEqual(
      model.expectedTaskRow(expected),
    );
  }
  // R43, R47: every child the engine started, the model started, in the same place.
  expect(system.children.untaken(), `${label}: children the model did not start`).toBe(0);
  const links = model.children
    .expectedLinks()
    .sort((a, b) => (String(a.id) < String(b.id) ? -1 : 1));
  expect(
    await system.children.links(system.db, system.workflowIds),
    `${label}: child links`,
  ).toEqual(links);
  // The public read says the same, through the engine's own row mappers (the public surfaces).
  for (const workflow of model.workflows) {
    expect(await system.publicView(workflow.id), `${label}: getWorkflow`).toEqual({
      state: workflow.parent,
      tasks: modelTasks
        .filter((task) => task.workflow === workflow)
        .map((task) => model.expectedTaskRow(task)),
      log: workflow.log,
    });
  }
}

/** The `index`-th task among those `prefer` accepts (among all without `prefer`). */
export function pickTask(
  model: EngineModel,
  index: number,
  prefer: ((task: ModelTask) => boolean) | null,
): ModelTask | undefined {
  const all = model.tasks();
  const pool = prefer === null ? all : all.filter(prefer);
  return pool.length === 0 ? undefined : pool[index % pool.length];
}

/** A claim's fence (R7): every later write of that claim is conditional on it. */
export interface Fence {
  readonly taskId: string;
  readonly holder: string;
  readonly epoch: number;
}

/** Whether a worker holds the task, as the model's columns say (R7). */
export const holdsLeaseState = (task: ModelTask) => task.columns.lease !== null;

/**
 * R7 as the model sees it: same holder and epoch, still leased or cancel_requested, lease not
 * run out. `undefined` when the lease ends in the very millisecond of `now`: a renewed lease's
 * expiry has microseconds the model (millisecond Dates) cannot see, so SQL may answer either way.
 */
export function modelHoldsLease(task: ModelTask, fence: Fence, now: Date, sqlFence: boolean) {
  const { lease, epoch } = task.columns;
  if (lease === null || lease.holder !== fence.holder || epoch !== fence.epoch) return false;
  if (sqlFence && lease.expiresAt.getTime() === now.getTime()) return undefined;
  return lease.expiresAt.getTime() > now.getTime();
}

/** The fence a worker would hold on the task: its current claim, or the one before (stale). */
export function fenceOf(task: ModelTask, stale: boolean): Fence {
  return {
    taskId: task.task.taskId,
    holder: task.columns.lease?.holder ?? workerHolders[0],
    epoch: task.columns.epoch - (stale ? 1 : 0),
  };
}

export function clockOf(now: Date, jitter: number) {
  return { now, random: () => jitter };
}

export function rowsOf(outcome: ModelOutcome): readonly LogRow[] {
  return outcome.kind === 'applied' ? outcome.rows : [];
}

/**
 * The answer an operation gives for one task (cancel, receipt, replay): the task as it is once
 * the call's transaction is over (R26: "each task's new state") and the reason of its latest
 * edge (R15: why it is in that state).
 */
export function answerOf(model: EngineModel, taskId: string, outcome: ModelOutcome) {
  if (outcome.kind === 'refused') tally(`answer: refused ${outcome.refusal.code}`);
  return outcome.kind === 'applied'
    ? { taskId, ...model.current(taskId), changed: true }
    : {
        taskId,
        state: outcome.state,
        changed: false,
        reason: outcome.reason,
        refusal: outcome.refusal.code,
        message: outcome.refusal.message,
      };
}

/**
 * The engine may apply a batch's events in any order among equals (ties in `order by`), so the
 * model follows the order the log shows — each event at the position of its task's first row —
 * and the test checks that order against the engine's sort keys.
 */
export function inLogOrder<T extends { readonly taskId: string }>(
  events: readonly T[],
  rows: readonly DbRow[],
): T[] {
  const position = (taskId: string) => {
    const index = rows.findIndex((row) => row.task_id === taskId);
    return index === -1 ? Number.POSITIVE_INFINITY : index;
  };
  // Events without a row (refused) come last, in task id order, as the engine answers them.
  return [...events].sort((a, b) => {
    const [first, second] = [position(a.taskId), position(b.taskId)];
    if (first !== second) return first < second ? -1 : 1;
    return a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0;
  });
}

export function expectSorted(label: string, keys: readonly (readonly (number | string)[])[]) {
  for (let index = 1; index < keys.length; index += 1) {
    const previous = keys[index - 1] as readonly (number | string)[];
    const current = keys[index] as readonly (number | string)[];
    expect(compareKeys(previous, current) <= 0, `${label}: ${JSON.stringify(keys)}`).toBe(true);
  }
}

export function compareKeys(
  a: readonly (number | string)[],
  b: readonly (number | string)[],
): number {
  for (let index = 0; index < Math.max(a.length, b.length); index += 1) {
    const x = a[index] as number | string;
    const y = b[index] as number | string;
    if (x < y) return -1;
    if (x > y) return 1;
  }
  return 0;
}

/** Runs one event in its own transaction, as the engine's settler does, returning its `now`. */
export async function applyInTransaction(system: RealSystem, request: EventRequest) {
  return system.db.transaction().execute(async (tx) => {
    const now = await databaseNow(tx);
    const result = await applyEvents(tx, system.context.apply, [request]);
    return { now, outcome: result.outcomes[0] };
  });
}

export abstract class ModelCommand implements Command {
  constructor(readonly jitter: number) {}

  /** Whether the command means something in this model state (fast-check skips it if not). */
  check(_model: Readonly<EngineModel>): boolean {
    return true;
  }

  async run(model: EngineModel, system: RealSystem): Promise<void> {
    system.shared.jitter.value = this.jitter;
    tally('(commands run)');
    const label = this.toString();
    await this.execute(model, system, label);
    if (model.hasStartedWaits()) throw new Error(`${label}: the model left waits unmatched`);
    if (model.children.pending()) throw new Error(`${label}: the model left children unfollowed`);
    await compareWithModel(model, system, label);
  }

  protected abstract execute(model: EngineModel, system: RealSystem, label: string): Promise<void>;
  abstract toString(): string;
}
