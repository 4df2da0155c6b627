/**
 * Time passing in the engine model test: the database clock moves (R11) past a chosen lease,
 * deadline, receipt deadline, run_at (a retry's backoff, a snooze, R36) or wait timeout (R39),
 * or by a fixed amount, and the engine's Sweeper runs once; the model applies what is due, in
 * the sweeper's order, and then the kept events the waits it started take (R37).
 */
import type { Actor, TaskEvent } from '@causeway/workflow/internal';
import { expect } from 'vitest';
import {
  clockOf,
  expectRows,
  expectSorted,
  inLogOrder,
  ModelCommand,
  rowsOf,
  terminalStates,
} from './model-harness';
import type { EngineModel } from './model-state';
import { type RealSystem, sweepGuardMs } from './model-system';
import { sweeperHolder } from './model-workflows';

export type ClockTarget = 'lease' | 'deadline' | 'receipt' | 'run_at' | 'wait' | 'fixed';

/**
 * Moves database time (R11) — past a chosen lease, deadline, receipt deadline, run_at or wait
 * timeout — and sweeps.
 */
export class ClockCommand extends ModelCommand {
  constructor(
    readonly target: ClockTarget,
    readonly taskIndex: number,
    readonly fixedMs: number,
    readonly sweep: boolean,
    jitter: number,
  ) {
    super(jitter);
  }

  toString() {
    const where =
      this.target === 'fixed'
        ? `+${this.fixedMs} ms`
        : `past ${this.target} of task ${this.taskIndex}`;
    return `clock(${where}${this.sweep ? ', sweep' : ''}, jitter ${this.jitter})`;
  }

  protected async execute(model: EngineModel, system: RealSystem, label: string) {
    const before = (await system.now()).getTime();
    await system.advanceTo(this.targetTime(model, before));
    if (!this.sweep) {
      expectRows(label, await system.takeRows(), []);
      return;
    }
    const listedAt = await system.sweep(() => sweepDeadlines(model));
    const rows = await system.takeRows();
    const now = rows[0]?.at ?? listedAt;
    expect(now.getTime() - listedAt.getTime(), `${label}: sweep took too long`).toBeLessThan(
      sweepGuardMs,
    );

    const actor: Actor = { kind: 'sweeper', name: sweeperHolder };
    type Due = { taskId: string; key: number[]; event: TaskEvent; output?: unknown };
    const due = model.tasks().flatMap((task): Due[] => {
      const { state, deadlineAt } = task.task.snapshot;
      const taskId = task.task.taskId;
      const dueAt = (at: Date | null) => at !== null && at.getTime() < listedAt.getTime();
      const { lease, receipt, wait } = task.columns;
      if (lease !== null && dueAt(lease.expiresAt)) {
        const key = [0, lease.expiresAt.getTime()];
        return [{ taskId, key, event: { type: 'lease_expired', actor } }];
      }
      if (state === 'queued' && dueAt(deadlineAt)) {
        const key = [1, 0, deadlineAt?.getTime() ?? 0];
        return [{ taskId, key, event: { type: 'deadline_passed', actor } }];
      }
      // R46: a step past its deadline while it awaits its children ends dead (and cancels them).
      if (state === 'awaiting_children' && dueAt(deadlineAt)) {
        const key = [1, 2, deadlineAt?.getTime() ?? 0];
        return [{ taskId, key, event: { type: 'deadline_passed', actor } }];
      }
      if (state === 'awaiting_receipt' && receipt !== null && dueAt(receipt.deadlineAt)) {
        const key = [2, receipt.deadlineAt.getTime()];
        return [{ taskId, key, event: { type: 'receipt_timeout', actor } }];
      }
      if (state !== 'waiting' || wait === null) return [];
      // R39: the workflow's deadline ends a wait, and so does its own timeout, with the
      // step's onTimeout output if it declares one. When both passed, the deadline is
      // checked first (the sweeper's order below): the timeout then finds the task dead.
      const onTimeout = task.step.event?.onTimeout ?? null;
      return [
        ...(dueAt(deadlineAt)
          ? [
              {
                taskId,
                key: [1, 1, deadlineAt?.getTime() ?? 0],
                event: { type: 'deadline_passed', actor },
              } as Due,
            ]
          : []),
        ...(dueAt(wait.timeoutAt)
          ? [
              {
                taskId,
                key: [3, wait.timeoutAt.getTime()],
                event: { type: 'wait_timeout', actor },
                ...(onTimeout === null ? {} : { output: onTimeout.output }),
              } as Due,
            ]
          : []),
      ];
    });
    const ordered = inLogOrder(due, rows);
    const clock = clockOf(now, this.jitter);
    const applied = ordered.map((item) => ({
      item,
      rows: rowsOf(
        model.apply(
          item.taskId,
          item.event,
          clock,
          item.output === undefined ? {} : { output: item.output },
        ),
      ),
    }));
    // The sweeper's order: expired leases, then deadlines (queued, waiting, awaiting children), then
    // receipts, then wait timeouts, oldest first.
    expectSorted(
      `${label}: sweep order`,
      applied.filter((entry) => entry.rows.length > 0).map((entry) => entry.item.key),
    );
    const expected = [
      ...applied.flatMap((entry) => entry.rows),
      ...model.followUp(clock, rows, system),
    ];
    expectRows(label, rows, expected, now);
  }

  private targetTime(model: EngineModel, now: number): number {
    const fixed = now + this.fixedMs;
    const times = model.tasks().flatMap((task): number[] => {
      const { snapshot } = task.task;
      switch (this.target) {
        case 'lease':
          return task.columns.lease !== null ? [task.columns.lease.expiresAt.getTime() + 1] : [];
        case 'deadline':
          return !terminalStates.includes(snapshot.state) && snapshot.deadlineAt !== null
            ? [snapshot.deadlineAt.getTime() + 1]
            : [];
        case 'receipt':
          return snapshot.state === 'awaiting_receipt' && task.columns.receipt !== null
            ? [task.columns.receipt.deadlineAt.getTime() + 1]
            : [];
        case 'run_at':
          return snapshot.state === 'queued' &&
            snapshot.runAt !== null &&
            snapshot.runAt.getTime() > now
            ? [snapshot.runAt.getTime()]
            : [];
        case 'wait':
          return task.columns.wait !== null ? [task.columns.wait.timeoutAt.getTime() + 1] : [];
        default:
          return [];
      }
    });
    return times.length === 0 ? fixed : (times[this.taskIndex % times.length] as number);
  }
}

/** What the sweeper looks at, as the model knows it (for the sweep's guard window). */
function sweepDeadlines(model: EngineModel): number[] {
  return model.tasks().flatMap((task) => {
    const { state, deadlineAt } = task.task.snapshot;
    const { lease, receipt, wait } = task.columns;
    if (lease !== null) return [lease.expiresAt.getTime()];
    if ((state === 'queued' || state === 'awaiting_children') && deadlineAt !== null) {
      return [deadlineAt.getTime()];
    }
    if (state === 'awaiting_receipt' && receipt !== null) return [receipt.deadlineAt.getTime()];
    if (state === 'waiting' && wait !== null) {
      return [wait.timeoutAt.getTime(), ...(deadlineAt === null ? [] : [deadlineAt.getTime()])];
    }
    return [];
  });
}
