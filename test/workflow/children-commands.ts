/**
 * The commands of the children property test: the events a step with child workflows meets,
 * each judged against R43–R47 as the contract words them (children-contract.ts). Commands pick their
 * task by index, usually among the tasks where they mean something, sometimes any task (so
 * refusals are exercised); worker events only reach a task whose lease a worker holds, as the
 * engine fences them (R7).
 */
import {
  type ActorKind,
  cancelWorkflowRun,
  type ErrorCategory,
  type RunTask,
  type TaskState,
} from '@causeway/workflow/internal';
import fc from 'fast-check';
import { specActorKinds, specAllowsEdge, specCancellers } from '../helpers/contract-tables';
import { actorKindArbitrary, actorOf, taskIndexArbitrary } from './arbitraries';
import {
  absorb,
  awaitsChildren,
  type ChildrenModel,
  type ChildrenReal,
  checkSettled,
  countChildren,
  expectEdge,
  expectRefused,
  invariant,
  type Outcome,
  sendEvent,
} from './children-model';

export type ChildrenCommand = fc.Command<ChildrenModel, ChildrenReal>;

export interface Target {
  readonly index: number;
  readonly anyState: boolean;
}

export const targetArbitrary: fc.Arbitrary<Target> = fc.record({
  index: taskIndexArbitrary,
  anyState: fc.integer({ min: 0, max: 3 }).map((roll) => roll === 0),
});

export const show = (target: Target) => `#${target.index}${target.anyState ? '*' : ''}`;

export function pick(
  tasks: readonly RunTask[],
  target: Target,
  relevant: (task: RunTask) => boolean,
): RunTask | undefined {
  const candidates = target.anyState ? tasks : tasks.filter(relevant);
  const pool = candidates.length > 0 ? candidates : tasks;
  return pool[target.index % Math.max(1, pool.length)];
}

/**
 * A task a worker's event reaches: mostly one whose lease it holds. The engine fences worker
 * events on the lease (R7), so none ever reaches a step awaiting children.
 */
function pickForWorker(model: ChildrenModel, real: ChildrenReal, target: Target) {
  const reachable = real.run.tasks.filter(
    (task) => model.leased.has(task.taskId) || task.snapshot.state !== 'cancel_requested',
  );
  return pick(reachable, target, (task) => model.leased.has(task.taskId));
}

export const inState =
  (...states: readonly TaskState[]) =>
  (task: RunTask) =>
    states.includes(task.snapshot.state);

export function command(
  label: string,
  execute: (model: ChildrenModel, real: ChildrenReal) => void,
): ChildrenCommand {
  return {
    check: () => true,
    run: (model, real) => {
      execute(model, real);
      checkSettled(model, real);
    },
    toString: () => label,
  };
}

/** A worker claims a queued task once it is due (R4); past its deadline it is finalized (R28). */
export const claimCommand = targetArbitrary.map((target) =>
  command(`claim(${show(target)})`, (model, real) => {
    const task = pick(real.run.tasks, target, inState('queued'));
    if (task === undefined) return;
    const runAt = task.snapshot.runAt;
    if (task.snapshot.state === 'queued' && runAt !== null) {
      real.nowMs = Math.max(real.nowMs, runAt.getTime());
    }
    const outcome = sendEvent(model, real, task.taskId, {
      type: 'claim',
      actor: actorOf('worker'),
    });
    if (outcome.before.state !== 'queued') return expectRefused(outcome);
    const { deadlineAt } = outcome.before;
    if (deadlineAt !== null && real.nowMs >= deadlineAt.getTime()) {
      return expectEdge(outcome, 'dead', 'deadline_exceeded_before_start');
    }
    expectEdge(outcome, 'leased', 'lease_acquired');
  }),
);

/** The step returned an output (R20), or under a cancel request the effect was submitted (R14). */
export const completeCommand = targetArbitrary.map((target) =>
  command(`complete(${show(target)})`, (model, real) => {
    const task = pickForWorker(model, real, target);
    if (task === undefined) return;
    const outcome = sendEvent(model, real, task.taskId, {
      type: 'complete',
      actor: actorOf('worker'),
    });
    if (outcome.before.state === 'leased') return expectEdge(outcome, 'succeeded', 'completed');
    if (outcome.before.state === 'cancel_requested') {
      return expectEdge(outcome, 'succeeded', 'cancel_after_submit');
    }
    expectRefused(outcome);
  }),
);

/** An attempt fails: retried or dead while leased; under a cancel request it confirms it. */
export const failCommand = fc
  .record({
    target: targetArbitrary,
    category: fc.constantFrom<ErrorCategory>('timeout', 'invalid_argument'),
  })
  .map(({ target, category }) =>
    command(`fail(${show(target)}, ${category})`, (model, real) => {
      const task = pickForWorker(model, real, target);
      if (task === undefined) return;
      const event = {
        type: 'fail',
        actor: actorOf('worker'),
        category,
        summary: category,
      } as const;
      const outcome = sendEvent(model, real, task.taskId, event);
      const retryable = category === 'timeout';
      if (outcome.before.state === 'cancel_requested') {
        if (retryable) return expectEdge(outcome, 'cancelled', 'cancel_confirmed');
        return expectEdge(outcome, 'dead', 'non_retryable_error');
      }
      if (outcome.before.state !== 'leased') return expectRefused(outcome);
      const { deadlineAt } = outcome.before;
      if (deadlineAt !== null && real.nowMs >= deadlineAt.getTime()) {
        return expectEdge(outcome, 'dead', 'deadline_exceeded');
      }
      if (!retryable) return expectEdge(outcome, 'dead', 'non_retryable_error');
      const reasons = ['retry_scheduled', 'attempts_exhausted', 'deadline_exceeded'];
      invariant(
        outcome.ok && ['queued', 'dead'].includes(outcome.to) && reasons.includes(outcome.reason),
        () => `a failed attempt ended ${outcome.ok ? outcome.reason : outcome.code}`,
      );
    }),
  );

/**
 * R43: the step returned `startChildren(...)` with `count` inputs and a tolerance: it awaits
 * them (`children_started`). R46: under a cancel request it starts none and ends `cancelled`
 * (`cancel_confirmed`). Mostly sent by the worker holding the lease, sometimes by anyone.
 */
export const startChildrenCommand = fc
  .record({
    target: targetArbitrary,
    count: fc.integer({ min: 0, max: 4 }),
    tolerance: fc.nat(),
    actor: actorKindArbitrary('worker'),
  })
  .map(({ target, count, tolerance, actor }) => {
    const allowedFailures = tolerance % (count + 1);
    return command(
      `startChildren(${show(target)}, ${count}, tolerate ${allowedFailures}) by ${actor}`,
      (model, real) => {
        const task = pickForWorker(model, real, target);
        if (task === undefined) return;
        const event = { type: 'start_children', actor: actorOf(actor), count } as const;
        const outcome = sendEvent(model, real, task.taskId, event);
        const { state } = outcome.before;
        const intended =
          state === 'leased'
            ? ({ to: 'awaiting_children', reason: 'children_started' } as const)
            : state === 'cancel_requested'
              ? ({ to: 'cancelled', reason: 'cancel_confirmed' } as const)
              : null;
        // The edge table's actor column says who may take the edge the event means.
        if (intended === null || !specAllowsEdge(state, intended.to, intended.reason, actor)) {
          return expectRefused(outcome);
        }
        expectEdge(outcome, intended.to, intended.reason);
        if (intended.to !== 'awaiting_children') return;
        invariant(!model.children.has(task.taskId), () => 'a step started children twice');
        const outcomes = Array.from({ length: count }, () => 'open' as const);
        model.children.set(task.taskId, { outcomes, allowedFailures });
        countChildren(model, real, task.taskId);
      },
    );
  });

/**
 * One child workflow of a step ends, succeeded or failed (dead or cancelled), and the engine
 * counts: children end one at a time, so the tallies only grow. The count comes from the
 * system, sometimes from another actor, who may settle nothing. A child may end after its step
 * settled (a failure or the deadline cancelled it): the step refuses the count.
 */
export const childEndsCommand = fc
  .record({
    index: fc.nat(),
    succeeded: fc.boolean(),
    actor: fc.oneof(
      { arbitrary: fc.constant<ActorKind>('system'), weight: 9 },
      { arbitrary: fc.constantFrom(...specActorKinds), weight: 1 },
    ),
  })
  .map(({ index, succeeded, actor }) =>
    command(
      `childEnds(#${index}, ${succeeded ? 'succeeded' : 'failed'}) by ${actor}`,
      (model, real) => {
        const parents = [...model.children].filter(([, children]) =>
          children.outcomes.includes('open'),
        );
        const awaiting = parents.filter(([taskId]) => awaitsChildren(model, taskId));
        const pool = awaiting.length > 0 && index % 4 !== 0 ? awaiting : parents;
        const chosen = pool[index % Math.max(1, pool.length)];
        if (chosen === undefined) return;
        const [taskId, children] = chosen;
        const open = children.outcomes.flatMap((outcome, child) =>
          outcome === 'open' ? [child] : [],
        );
        const child = open[index % open.length] as number;
        children.outcomes[child] = succeeded ? 'succeeded' : 'failed';
        countChildren(model, real, taskId, actorOf(actor));
        // A stray count may settle nothing; the engine's own count follows it.
        if (actor !== 'system') countChildren(model, real, taskId);
      },
    ),
  );

/** R12/R13/R46: cancel a task, then again: the repeat is refused and writes nothing. */
export const cancelTaskCommand = fc
  .record({ target: targetArbitrary, actor: actorKindArbitrary(...specCancellers) })
  .map(({ target, actor }) =>
    command(`cancelTask(${show(target)}) ×2 by ${actor}`, (model, real) => {
      const task = pick(real.run.tasks, target, inState('awaiting_children', 'leased'));
      if (task === undefined) return;
      const first = sendEvent(model, real, task.taskId, { type: 'cancel', actor: actorOf(actor) });
      const rows = model.log.length;
      const second = sendEvent(model, real, task.taskId, { type: 'cancel', actor: actorOf(actor) });
      expectRefused(second);
      invariant(model.log.length === rows, () => 'the repeated cancel wrote a row');
      if (!specCancellers.includes(actor)) return expectRefused(first);
      expectCancel(first);
    }),
  );

function expectCancel(outcome: Outcome) {
  switch (outcome.before.state) {
    case 'pending':
    case 'queued':
      return expectEdge(outcome, 'cancelled', 'cancelled_before_start');
    case 'leased':
    case 'awaiting_children':
      // R46: it waits for its children to stop (each asked to cancel, R12–R14).
      return expectEdge(outcome, 'cancel_requested', 'cancel_requested');
    case 'cancel_requested':
      return expectRefused(outcome, 'cancel_already_requested');
    default:
      return expectRefused(outcome);
  }
}

/** R46: cancel the workflow twice; every step awaiting children is asked to cancel. */
export const cancelWorkflowCommand = actorKindArbitrary(...specCancellers).map((actor) =>
  command(`cancelWorkflow() ×2 by ${actor}`, (model, real) => {
    for (const attempt of [1, 2]) {
      const before = real.run;
      const result = cancelWorkflow(model, real, actor);
      if (attempt === 2 || !specCancellers.includes(actor)) {
        invariant(
          result === 0 && real.run === before,
          () => `a cancel by ${actor} wrote ${result}`,
        );
      }
    }
  }),
);

function cancelWorkflow(model: ChildrenModel, real: ChildrenReal, actor: ActorKind): number {
  const before = real.run;
  const result = cancelWorkflowRun(model.definition, before, actorOf(actor), {
    now: new Date(real.nowMs),
    random: () => 0.5,
  });
  const expected: Partial<Record<TaskState, TaskState>> = {
    pending: 'cancelled',
    queued: 'cancelled',
    leased: 'cancel_requested',
    awaiting_children: 'cancel_requested',
  };
  for (const row of result.transitions) {
    if (row.kind !== 'task') continue;
    const { from, to } = row.edge;
    invariant(
      from !== null && to === expected[from],
      () => `a workflow cancel took ${from} → ${to}`,
    );
  }
  const stoppable = before.tasks.filter((task) => expected[task.snapshot.state] !== undefined);
  const allowed = specCancellers.includes(actor);
  invariant(
    result.transitions.filter((row) => row.kind === 'task').length ===
      (allowed ? stoppable.length : 0),
    () => `a workflow cancel by ${actor} left ${stoppable.map((task) => task.step)} running`,
  );
  if (result.transitions.length > 0) absorb(model, real, result.run, result.transitions, null);
  return result.transitions.length;
}
