/**
 * The engine model test's commands for child workflows (R43–R47): a running `fan` step returns
 * `startChildren` for 1–3 kids, with or without a tolerance (as its worker reports it: one
 * `start_children` event fenced on its lease, with the request beside it); and a kid is driven
 * to an outcome (claimed if it waits in its queue, then completed or failed for good), so the
 * step's children settle it. Cancels of the parent, deadlines, replays of the dead step and
 * every other end of a kid are the model's ordinary commands: a kid is an ordinary workflow.
 */

import type { TaskEvent } from '@causeway/workflow/internal';
import fc from 'fast-check';
import { expect } from 'vitest';
import type { ChildRequest as EngineChildRequest } from '../../packages/engine/src/runtime/children/child-admission';
import { applyEvents } from '../../packages/engine/src/runtime/decision/apply-events';
import {
  applyInTransaction,
  clockOf,
  expectRows,
  fenceOf,
  holdsLeaseState,
  ModelCommand,
  modelHoldsLease,
  pickTask,
  rowsOf,
  tally,
} from './model-harness';
import type { EngineModel, ModelTask } from './model-state';
import { databaseNow, type RealSystem } from './model-system';
import { modelKid, workerHolders } from './model-workflows';

/** One worker's claim of one queued task, as its claim transaction writes it (R7, R8). */
async function claimOne(
  model: EngineModel,
  system: RealSystem,
  target: ModelTask,
  holderIndex: number,
  label: string,
): Promise<void> {
  const taskId = target.task.taskId;
  const holder = workerHolders[holderIndex % workerHolders.length] as string;
  const claim: TaskEvent = { type: 'claim', actor: { kind: 'worker', name: holder } };
  const now = await system.db.transaction().execute(async (tx) => {
    const now = await databaseNow(tx);
    await applyEvents(tx, system.context.apply, [{ taskId, event: claim }], {
      skipLocked: true,
      holder,
      workflowIdOf: new Map([[taskId, target.workflow.id]]),
    });
    return now;
  });
  const rows = await system.takeRows();
  const clock = clockOf(now, 0);
  const claimed = model.apply(taskId, claim, clock, { holder });
  const expected = [...rowsOf(claimed), ...model.followUp(clock, rows, system)];
  expectRows(`${label}: claim`, rows, expected, now);
}

/** Whether a step waits in its queue, due now (as the model knows it), or runs. */
function claimableOrRunning(task: ModelTask): boolean {
  return task.task.snapshot.state === 'queued' || holdsLeaseState(task);
}

/** The children that are still open and may go on: waiting in their queue, or running. */
export function childPool(model: EngineModel): ModelTask[] {
  return model
    .tasks()
    .filter((task) => task.workflow.definition.name === modelKid.name && claimableOrRunning(task));
}

/** A running `fan` step returns `startChildren(model-kid, inputs, { tolerate })` (R43). */
export class StartChildrenCommand extends ModelCommand {
  constructor(
    readonly taskIndex: number,
    readonly count: number,
    readonly tolerate: number | null,
    readonly stale: boolean,
  ) {
    super(0);
  }

  toString() {
    const tolerance = this.tolerate === null ? '' : `, tolerating ${this.tolerate}`;
    return `startChildren(task ${this.taskIndex}, ${this.count} kids${tolerance}${this.stale ? ', stale fence' : ''})`;
  }

  override check(model: Readonly<EngineModel>): boolean {
    return this.target(model as EngineModel) !== undefined;
  }

  private target(model: EngineModel): ModelTask | undefined {
    return pickTask(
      model,
      this.taskIndex,
      (task) => task.step.name === 'fan' && claimableOrRunning(task),
    );
  }

  protected async execute(model: EngineModel, system: RealSystem, label: string) {
    const found = this.target(model);
    if (found === undefined) return;
    const taskId = found.task.taskId;
    // A fan waiting in its queue is claimed first: its worker then runs it.
    if (found.task.snapshot.state === 'queued') await claimOne(model, system, found, 0, label);
    const target = model.task(taskId);
    if (!holdsLeaseState(target)) return;
    const fence = fenceOf(target, this.stale);
    const inputs = Array.from({ length: this.count }, (_, index) => ({ n: index }));
    const event: TaskEvent = {
      type: 'start_children',
      actor: { kind: 'worker', name: fence.holder },
      count: this.count,
    };
    const children: EngineChildRequest = {
      workflow: modelKid.name,
      inputs,
      tolerate: this.tolerate === null ? null : { failures: this.tolerate },
      single: false,
      detached: false,
      maxChildren: 10_000,
    };
    const { now, outcome } = await applyInTransaction(system, {
      taskId,
      event,
      fence,
      extra: { children },
    });
    const rows = await system.takeRows();
    if (!modelHoldsLease(target, fence, now, false)) {
      expect(outcome?.kind, `${label}: outcome`).toBe('stale');
      tally('startChildren: stale writer');
      expectRows(label, rows, []);
      return;
    }
    const clock = clockOf(now, this.jitter);
    model.children.request(taskId, { inputs, tolerate: this.tolerate });
    const expected = model.apply(taskId, event, clock);
    // Under a cancel request no child starts (R46): the request is dropped with the step.
    model.children.request(taskId, null);
    expect(outcome?.kind, `${label}: outcome`).toBe(expected.kind);
    expectRows(label, rows, [...rowsOf(expected), ...model.followUp(clock, rows, system)], now);
  }
}

/** What a kid's worker does: only start it (it keeps running), complete it, or fail it for good. */
export type ChildOutcome = 'runs' | 'succeeds' | 'fails';

/**
 * A kid that is still open goes on as its worker says: claimed first if it waits in its queue
 * (one worker's claim of that task), then left running, completed, or failed for good
 * (`invalid_argument`).
 */
export class ChildOutcomeCommand extends ModelCommand {
  constructor(
    readonly childIndex: number,
    readonly outcome: ChildOutcome,
    readonly holderIndex: number,
  ) {
    super(0);
  }

  toString() {
    return `child ${this.outcome}(kid ${this.childIndex}, worker ${this.holderIndex})`;
  }

  override check(model: Readonly<EngineModel>): boolean {
    return this.target(model as EngineModel) !== undefined;
  }

  private target(model: EngineModel): ModelTask | undefined {
    const pool = childPool(model);
    return pool[this.childIndex % Math.max(1, pool.length)];
  }

  protected async execute(model: EngineModel, system: RealSystem, label: string) {
    const target = this.target(model);
    if (target === undefined) return;
    const taskId = target.task.taskId;
    if (target.task.snapshot.state === 'queued') {
      await claimOne(model, system, target, this.holderIndex, label);
    }
    const running = model.task(taskId);
    if (!holdsLeaseState(running) || this.outcome === 'runs') return;
    const succeeds = this.outcome === 'succeeds';
    const fence = fenceOf(running, false);
    const actor = { kind: 'worker', name: fence.holder } as const;
    const output = { by: fence.holder, epoch: fence.epoch };
    const event: TaskEvent = succeeds
      ? { type: 'complete', actor }
      : { type: 'fail', actor, category: 'invalid_argument', summary: 'the kid gives up' };
    const { now, outcome } = await applyInTransaction(system, {
      taskId,
      workflowId: running.workflow.id,
      event,
      fence,
      ...(succeeds ? { extra: { outputJson: JSON.stringify(output) } } : {}),
    });
    const rows = await system.takeRows();
    if (!modelHoldsLease(running, fence, now, false)) {
      // Its lease ran out meanwhile (R7): the worker's result changes nothing.
      expect(outcome?.kind, `${label}: outcome`).toBe('stale');
      expectRows(label, rows, []);
      return;
    }
    const clock = clockOf(now, this.jitter);
    const expected = model.apply(taskId, event, clock, succeeds ? { output } : {});
    expect(outcome?.kind, `${label}: outcome`).toBe(expected.kind);
    expectRows(label, rows, [...rowsOf(expected), ...model.followUp(clock, rows, system)], now);
  }
}

const indexArbitrary = fc.nat({ max: 11 });

export const startChildrenCommand = fc
  .record({
    task: indexArbitrary,
    count: fc.integer({ min: 1, max: 3 }),
    tolerate: fc.option(fc.constantFrom(0, 1, 2), { freq: 2 }),
    stale: fc.oneof(
      { arbitrary: fc.constant(false), weight: 8 },
      { arbitrary: fc.constant(true), weight: 1 },
    ),
  })
  .map(
    ({ task, count, tolerate, stale }) => new StartChildrenCommand(task, count, tolerate, stale),
  );

export const childOutcomeCommand = fc
  .record({
    child: indexArbitrary,
    outcome: fc.constantFrom<ChildOutcome>('runs', 'succeeds', 'succeeds', 'fails'),
    holder: fc.nat({ max: workerHolders.length - 1 }),
  })
  .map(({ child, outcome, holder }) => new ChildOutcomeCommand(child, outcome, holder));
