/**
 * Cancels in the engine model test (R12–R15, R46): `engine.cancelTask` and
 * `engine.cancelWorkflow` by a client or an operator, answered with the task or workflow as the
 * call's transaction left it. A cancel of a step awaiting its children asks them to cancel in
 * the same transaction (model-children.ts).
 */
import type { Actor } from '@causeway/workflow/internal';
import fc from 'fast-check';
import { expect } from 'vitest';
import {
  answerOf,
  clockOf,
  expectRows,
  ModelCommand,
  pickTask,
  rowsOf,
  terminalStates,
} from './model-harness';
import type { EngineModel, ModelTask, ModelWorkflow } from './model-state';
import type { RealSystem } from './model-system';

/** `engine.cancelTask` by a client or an operator (R12–R15). */
export class CancelTaskCommand extends ModelCommand {
  constructor(
    readonly taskIndex: number,
    readonly anyTask: boolean,
    readonly operator: boolean,
  ) {
    super(0);
  }

  toString() {
    return `cancelTask(task ${this.taskIndex}${this.anyTask ? ' of all' : ''}${this.operator ? ', by operator' : ''})`;
  }

  override check(model: Readonly<EngineModel>): boolean {
    return this.target(model as EngineModel) !== undefined;
  }

  private target(model: EngineModel): ModelTask | undefined {
    return pickTask(
      model,
      this.taskIndex,
      this.anyTask ? null : (task) => !terminalStates.includes(task.task.snapshot.state),
    );
  }

  protected async execute(model: EngineModel, system: RealSystem, label: string) {
    const target = this.target(model);
    if (target === undefined) return;
    const taskId = target.task.taskId;
    const answer = await system.engine.cancelTask(
      taskId,
      this.operator ? { operator: 'alice' } : {},
    );
    const rows = await system.takeRows();
    // A cancel decides nothing by time; the log's time is the transaction's `now`.
    const now = rows[0]?.at ?? (await system.now());
    const actor: Actor = this.operator ? { kind: 'operator', name: 'alice' } : { kind: 'client' };
    const clock = clockOf(now, this.jitter);
    const expected = model.apply(taskId, { type: 'cancel', actor }, clock);
    const after = model.followUp(clock, rows, system);
    expect(answer, `${label}: answer`).toEqual(answerOf(model, taskId, expected));
    expectRows(label, rows, [...rowsOf(expected), ...after], now);
  }
}

/**
 * `engine.cancelWorkflow`: every task that can still be stopped (R12, R13); an operator gives a
 * reason. With `parents`, the workflow is one whose step awaits its children (R46).
 */
export class CancelWorkflowCommand extends ModelCommand {
  constructor(
    readonly workflowIndex: number,
    readonly operator: boolean,
    readonly parents = false,
  ) {
    super(0);
  }

  override check(model: Readonly<EngineModel>): boolean {
    return this.pool(model as EngineModel).length > 0;
  }

  toString() {
    const which = this.parents ? 'parent' : 'workflow';
    return `cancelWorkflow(${which} ${this.workflowIndex}${this.operator ? ', by operator' : ''})`;
  }

  private pool(model: EngineModel): readonly ModelWorkflow[] {
    if (!this.parents) return model.workflows;
    return model.workflows.filter((workflow) =>
      workflow.run.tasks.some((task) => task.snapshot.state === 'awaiting_children'),
    );
  }

  protected async execute(model: EngineModel, system: RealSystem, label: string) {
    const pool = this.pool(model);
    const workflow = pool[this.workflowIndex % Math.max(1, pool.length)];
    if (workflow === undefined) return;
    const reason = this.operator ? 'model cancel' : undefined;
    const answer = await system.engine.cancelWorkflow(
      workflow.id,
      this.operator ? { operator: 'bob', reason } : {},
    );
    const rows = await system.takeRows();
    const now = rows[0]?.at ?? (await system.now());
    const actor: Actor = this.operator ? { kind: 'operator', name: 'bob' } : { kind: 'client' };
    const clock = clockOf(now, this.jitter);
    const cancelled = model.cancelWorkflow(workflow.id, actor, clock, reason);
    const expected = [...cancelled, ...model.followUp(clock, rows, system)];
    // R15: the workflow as the call's transaction left it; changed when it took an edge.
    expect(answer, `${label}: answer`).toEqual({
      workflowId: workflow.id,
      state: model.workflow(workflow.id).parent,
      changed: cancelled.some((row) => row.task_id !== null),
    });
    expectRows(label, rows, expected, now);
  }
}

/** A cancel of any workflow, or (`parents`) of one whose step awaits its children. */
export function cancelWorkflowCommand(parents: boolean): fc.Arbitrary<CancelWorkflowCommand> {
  return fc
    .record({ workflow: fc.nat({ max: 11 }), operator: fc.boolean() })
    .map(({ workflow, operator }) => new CancelWorkflowCommand(workflow, operator, parents));
}
