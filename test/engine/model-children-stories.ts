/**
 * Stories of one parent step and its children in the engine model test, lined up from the
 * model's ordinary commands (each compared with the engine as it runs), to reach what
 * independent commands rarely do (R45–R47):
 *   - `succeed`: every open child succeeds, so the step settles `children_succeeded`;
 *   - `fail-replay`: one child fails (fail fast cancels its siblings, or a tolerance keeps the
 *     step waiting), the dead step is replayed by an operator, then every open child succeeds;
 *   - `straggler-replay`: every child is started and one fails, so fail fast asks the running
 *     ones to cancel; the dead step is replayed while they are still asked, then the sweeper
 *     ends one of them at its lease (cancelled: started again in its place, R47), and every
 *     open child succeeds;
 *   - `cancel-running`: every child is started, the parent workflow is cancelled (each running
 *     child is asked to stop), then every child still running succeeds anyway, so the step
 *     ends `cancel_after_submit` when all of them did;
 *   - `deadline`: the clock passes the step's deadline, which its children share, and the
 *     sweeper ends what is due.
 */
import fc from 'fast-check';
import { CancelWorkflowCommand } from './model-cancel';
import { ChildOutcomeCommand, childPool } from './model-children-commands';
import { ClockCommand } from './model-clock';
import { ModelCommand, tally, terminalStates } from './model-harness';
import { ReplayCommand } from './model-replay';
import type { EngineModel, ModelTask } from './model-state';
import type { RealSystem } from './model-system';

export type ChildrenStory =
  | 'succeed'
  | 'fail-replay'
  | 'straggler-replay'
  | 'cancel-running'
  | 'deadline';

/** The `fan` steps that await their children. */
function awaitingSteps(model: EngineModel): ModelTask[] {
  return model.tasks().filter((task) => task.task.snapshot.state === 'awaiting_children');
}

/** The position of `taskId` among `pool`, as a command's index picks it. */
function positionIn(pool: readonly ModelTask[], taskId: string): number {
  return Math.max(
    0,
    pool.findIndex((task) => task.task.taskId === taskId),
  );
}

export class ChildrenStoryCommand extends ModelCommand {
  constructor(
    readonly story: ChildrenStory,
    readonly index: number,
  ) {
    super(0);
  }

  toString() {
    return `childrenStory(${this.story}, step ${this.index})`;
  }

  override check(model: Readonly<EngineModel>): boolean {
    return awaitingSteps(model as EngineModel).length > 0;
  }

  protected async execute(model: EngineModel, system: RealSystem) {
    const steps = awaitingSteps(model);
    const step = steps[this.index % Math.max(1, steps.length)];
    if (step === undefined) return;
    const stepId = step.task.taskId;
    tally(`children story: ${this.story}`);
    const kidsOf = () =>
      childPool(model).filter(
        (task) => model.children.links.get(task.workflow.id)?.taskId === stepId,
      );
    const each = async (outcome: 'runs' | 'succeeds' | 'fails', onlyFirst = false) => {
      for (const kid of onlyFirst ? kidsOf().slice(0, 1) : kidsOf()) {
        // A child an earlier one's end settled (cancelled by the failed step) is left alone.
        const at = childPool(model).findIndex((task) => task.task.taskId === kid.task.taskId);
        if (at !== -1) await new ChildOutcomeCommand(at, outcome, at).run(model, system);
      }
    };
    switch (this.story) {
      case 'succeed':
        await each('succeeds');
        return;
      case 'fail-replay':
      case 'straggler-replay': {
        if (this.story === 'straggler-replay') await each('runs');
        await each('fails', true);
        if (model.task(stepId).task.snapshot.state !== 'dead') return;
        const dead = model
          .tasks()
          .filter(
            (task) => task.task.snapshot.state === 'dead' && model.children.has(task.task.taskId),
          );
        await new ReplayCommand(positionIn(dead, stepId), false, true).run(model, system);
        if (this.story === 'straggler-replay') {
          const leased = model.tasks().filter((task) => task.columns.lease !== null);
          const straggler = leased.find(
            (task) =>
              task.task.snapshot.state === 'cancel_requested' &&
              model.children.links.get(task.workflow.id)?.taskId === stepId,
          );
          if (straggler !== undefined) {
            const at = positionIn(leased, straggler.task.taskId);
            await new ClockCommand('lease', at, 0, true, 0).run(model, system);
          }
        }
        await each('succeeds');
        return;
      }
      case 'cancel-running': {
        await each('runs');
        const parents = model.workflows.filter((workflow) =>
          workflow.run.tasks.some((task) => task.snapshot.state === 'awaiting_children'),
        );
        const at = parents.findIndex((workflow) => workflow.id === step.workflow.id);
        await new CancelWorkflowCommand(Math.max(0, at), true, true).run(model, system);
        await each('succeeds');
        return;
      }
      case 'deadline': {
        const due = model
          .tasks()
          .filter(
            (task) =>
              !terminalStates.includes(task.task.snapshot.state) &&
              task.task.snapshot.deadlineAt !== null,
          );
        await new ClockCommand('deadline', positionIn(due, stepId), 0, true, 0).run(model, system);
        return;
      }
    }
  }
}

export const childrenStoryCommand = fc
  .record({
    story: fc.constantFrom<ChildrenStory>(
      'succeed',
      'fail-replay',
      'straggler-replay',
      'cancel-running',
      'cancel-running',
      'deadline',
    ),
    index: fc.nat({ max: 11 }),
  })
  .map(({ story, index }) => new ChildrenStoryCommand(story, index));
