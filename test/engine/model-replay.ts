/**
 * The operator's edges out of `dead` in the engine model test (R26, R39): `replayTask` and
 * `requeueDead` (dead → queued, an event step dead → waiting with a fresh timeout, where it
 * takes an event kept for it at once, R37). Each answers the task as it is after the call.
 */
import { EngineError } from '@causeway/engine';
import type { ReasonCode, TaskEvent } from '@causeway/workflow/internal';
import { expect } from 'vitest';
import {
  answerOf,
  clockOf,
  expectRows,
  expectSorted,
  inLogOrder,
  ModelCommand,
  pickTask,
  rowsOf,
} from './model-harness';
import type { EngineModel, ModelTask } from './model-state';
import type { RealSystem } from './model-system';

/**
 * `engine.replayTask` by an operator (dead → queued, `manual_replay`). With `parents`, the dead
 * task is a step that started children: it awaits them again (R47).
 */
export class ReplayCommand extends ModelCommand {
  constructor(
    readonly taskIndex: number,
    readonly anyTask: boolean,
    readonly parents = false,
  ) {
    super(0);
  }

  toString() {
    const which = this.parents ? 'parent step' : 'task';
    return `replay(${which} ${this.taskIndex}${this.anyTask ? ' of all' : ''})`;
  }

  override check(model: Readonly<EngineModel>): boolean {
    return this.target(model as EngineModel) !== undefined;
  }

  private target(model: EngineModel): ModelTask | undefined {
    return pickTask(
      model,
      this.taskIndex,
      this.anyTask
        ? null
        : (task) =>
            task.task.snapshot.state === 'dead' &&
            (!this.parents || model.children.has(task.task.taskId)),
    );
  }

  protected async execute(model: EngineModel, system: RealSystem, label: string) {
    const target = this.target(model);
    if (target === undefined) return;
    const taskId = target.task.taskId;
    const reason = 'model replay';
    let answer: unknown;
    try {
      answer = await system.engine.replayTask(taskId, { operator: 'carol', reason });
    } catch (error) {
      answer = error instanceof EngineError ? { error: error.code } : error;
    }
    const rows = await system.takeRows();
    const now = rows[0]?.at ?? (await system.now());
    const clock = clockOf(now, this.jitter);
    const expected = model.apply(
      taskId,
      { type: 'replay', actor: { kind: 'operator', name: 'carol' }, reason, bulk: false },
      clock,
    );
    // R39: a replayed event step waits again, and takes an event kept for it at once (R37).
    const after = model.followUp(clock, rows, system);
    expect(answer, `${label}: answer`).toEqual(
      expected.kind === 'applied' ? answerOf(model, taskId, expected) : { error: 'conflict' },
    );
    expectRows(label, rows, [...rowsOf(expected), ...after], now);
  }
}

export const deadReasons: readonly ReasonCode[] = [
  'non_retryable_error',
  'attempts_exhausted',
  'lease_expired_effect_uncertain',
  'deadline_exceeded',
  'deadline_exceeded_before_start',
  'receipt_rejected',
  'receipt_timeout',
  'event_timeout',
  'step_input_failed',
];

/** `engine.requeueDead` (R26) over this run's whole time range. */
export class BulkRequeueCommand extends ModelCommand {
  /** `reasonIndex` picks among the reasons dead tasks of the run have (else among all). */
  constructor(readonly reasonIndex: number) {
    super(0);
  }

  toString() {
    return `requeueDead(reason ${this.reasonIndex})`;
  }

  override check(model: Readonly<EngineModel>): boolean {
    return (model as EngineModel).tasks().some((task) => task.task.snapshot.state === 'dead');
  }

  protected async execute(model: EngineModel, system: RealSystem, label: string) {
    const present = deadReasons.filter((code) =>
      model
        .tasks()
        .some((task) => task.task.snapshot.state === 'dead' && task.columns.last.reason === code),
    );
    const pool = present.length > 0 ? present : deadReasons;
    const reasonCode = pool[this.reasonIndex % pool.length] as ReasonCode;
    label = `${label} = ${reasonCode}`;
    const before = await system.now();
    const reason = 'model bulk requeue';
    const answers = await system.engine.requeueDead({
      reasonCode,
      from: system.runStart,
      to: new Date(before.getTime() + 400 * 86_400_000),
      operator: 'dave',
      reason,
    });
    const rows = await system.takeRows();
    const now = rows[0]?.at ?? before;
    const due = model
      .tasks()
      .filter(
        (task) => task.task.snapshot.state === 'dead' && task.columns.last.reason === reasonCode,
      )
      .map((task) => ({ taskId: task.task.taskId }));
    const ordered = inLogOrder(due, rows);
    expectSorted(
      `${label}: requeue order (task id)`,
      ordered.map((item) => [item.taskId]),
    );
    const event: TaskEvent = {
      type: 'replay',
      actor: { kind: 'operator', name: 'dave' },
      reason,
      bulk: true,
    };
    const clock = clockOf(now, this.jitter);
    const outcomes = ordered.map((item) => ({
      taskId: item.taskId,
      outcome: model.apply(item.taskId, event, clock),
    }));
    const after = model.followUp(clock, rows, system);
    expect(answers, `${label}: answers`).toEqual(
      outcomes.map(({ taskId, outcome }) => answerOf(model, taskId, outcome)),
    );
    expectRows(label, rows, [...outcomes.flatMap(({ outcome }) => rowsOf(outcome)), ...after], now);
  }
}
