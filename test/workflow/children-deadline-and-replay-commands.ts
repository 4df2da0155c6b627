/**
 * The children property test's commands about time and operators: the workflow's deadline
 * passing (R28, R46), replays and bulk requeues of dead steps (R26, R47), and the clock.
 */
import type { TaskEvent } from '@causeway/workflow/internal';
import fc from 'fast-check';
import { specActorText } from '../helpers/contract-tables';
import { actorKindArbitrary, actorOf } from './arbitraries';
import {
  type ChildrenCommand,
  command,
  inState,
  pick,
  show,
  targetArbitrary,
} from './children-commands';
import {
  acceptedAtMs,
  type ChildrenModel,
  type ChildrenReal,
  countChildren,
  expectEdge,
  expectRefused,
  invariant,
  type Outcome,
  sendEvent,
  stepSpecOf,
} from './children-model';

const sweeper = actorOf('sweeper');

/**
 * R28, R46: past the deadline a queued task is finalized before it starts and a step awaiting
 * children ends dead (`deadline_exceeded`, by the sweeper); its children are cancelled, so they
 * end later without touching it. Before the deadline nothing happens.
 */
function expectDeadline(outcome: Outcome, nowMs: number) {
  const { state, deadlineAt } = outcome.before;
  const passed = deadlineAt !== null && nowMs >= deadlineAt.getTime();
  if (state === 'queued' && passed) {
    return expectEdge(outcome, 'dead', 'deadline_exceeded_before_start');
  }
  if (state !== 'awaiting_children') return expectRefused(outcome);
  if (!passed) return expectRefused(outcome, 'deadline_not_reached');
  expectEdge(outcome, 'dead', 'deadline_exceeded');
  invariant(
    outcome.ok && outcome.actor === specActorText(sweeper) && outcome.errorCategory === 'timeout',
    () => `the deadline ended it by ${outcome.ok && outcome.actor}`,
  );
}

/** Time passes the workflow's deadline (if it has one), then the sweeper tells every task. */
export const deadlinePassesCommand = fc.integer({ min: 0, max: 2_000 }).map((extraMs) =>
  command(`deadlinePasses(+${extraMs} ms)`, (model, real) => {
    const { deadlineMs } = model.spec;
    if (deadlineMs !== null) {
      real.nowMs = Math.max(real.nowMs, acceptedAtMs + deadlineMs + extraMs);
    }
    for (const { taskId } of real.run.tasks) {
      const event: TaskEvent = { type: 'deadline_passed', actor: sweeper };
      expectDeadline(sendEvent(model, real, taskId, event), real.nowMs);
    }
  }),
);

/** `deadline_passed` sent now to one task, whether or not its deadline passed. */
export const deadlineCheckCommand = targetArbitrary.map((target) =>
  command(`deadlineCheck(${show(target)})`, (model, real) => {
    const task = pick(real.run.tasks, target, inState('awaiting_children'));
    if (task === undefined) return;
    const event: TaskEvent = { type: 'deadline_passed', actor: sweeper };
    expectDeadline(sendEvent(model, real, task.taskId, event), real.nowMs);
  }),
);

/**
 * R26, R47, R58: an operator replays a dead step (with a name and a reason, or not). A step
 * that started children, or a map step, awaits them again: dead and cancelled ones run again,
 * succeeded ones are kept; a map step whose list still fails is refused; any other step is
 * queued. The engine then counts the children.
 */
function replay(
  model: ChildrenModel,
  real: ChildrenReal,
  taskId: string,
  event: Extract<TaskEvent, { type: 'replay' }>,
) {
  const outcome = sendEvent(model, real, taskId, event);
  const named = event.actor.kind === 'operator' && event.actor.name !== undefined;
  if (!named || event.reason.trim() === '' || outcome.before.state !== 'dead') {
    return expectRefused(outcome);
  }
  const stepSpec = stepSpecOf(model, taskId);
  if (stepSpec.kind === 'map' && stepSpec.listFails) {
    return expectRefused(outcome, 'step_input_failed');
  }
  const reason = event.bulk ? 'bulk_requeue' : 'manual_replay';
  if (stepSpec.kind === 'code' && !model.children.has(taskId)) {
    return expectEdge(outcome, 'queued', reason);
  }
  expectEdge(outcome, 'awaiting_children', reason);
  countChildren(model, real, taskId);
}

export const replayCommand = fc
  .record({
    target: targetArbitrary,
    actor: actorKindArbitrary('operator'),
    named: fc.integer({ min: 0, max: 3 }).map((roll) => roll !== 0),
    reason: fc.constantFrom('children fixed', ' '),
  })
  .map(({ target, actor, named, reason }) =>
    command(
      `replay(${show(target)}, ${named ? 'named' : 'anonymous'}, ${JSON.stringify(reason)}) by ${actor}`,
      (model, real) => {
        const task = pick(real.run.tasks, target, inState('dead'));
        if (task === undefined) return;
        const operator = named ? actorOf(actor) : { kind: actor };
        replay(model, real, task.taskId, { type: 'replay', actor: operator, reason, bulk: false });
      },
    ),
  );

/** R26: an operator requeues every dead task. */
export const bulkRequeueCommand: fc.Arbitrary<ChildrenCommand> = fc.constant(
  command('bulkRequeue()', (model, real) => {
    const dead = real.run.tasks.filter((task) => task.snapshot.state === 'dead');
    for (const { taskId } of dead) {
      const reason = 'requeue after the outage';
      replay(model, real, taskId, {
        type: 'replay',
        actor: actorOf('operator'),
        reason,
        bulk: true,
      });
    }
  }),
);

export const advanceClockCommand = fc.integer({ min: 1, max: 10_000 }).map((ms) =>
  command(`advanceClock(+${ms} ms)`, (_model, real) => {
    real.nowMs += ms;
  }),
);
