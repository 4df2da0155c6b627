/**
 * The machine's decisions for a step with child workflows (R43, R45, R46): starting them, and
 * settling once their outcomes decide the step. Pure, like the rest of the machine: the
 * engine counts the children and the tolerance; the rules of what the counts mean live here.
 */
import {
  type ChoiceOrRefusal,
  choose,
  type DecideInput,
  notApplicable,
  refuse,
} from './machine-choice';
import type { ChildTally, TaskEvent } from './task-events';

type StartChildren = Extract<TaskEvent, { type: 'start_children' }>;
type ChildrenChanged = Extract<TaskEvent, { type: 'children_changed' }>;

/**
 * A step returned `startChildren(...)`: it awaits them, holding no lease. Under a cancel
 * request it starts none: starting children is its effect, and the cancel caught it first.
 */
export function decideStartChildren(input: DecideInput, event: StartChildren): ChoiceOrRefusal {
  const { task } = input;
  if (task.state === 'cancel_requested') {
    return choose('cancelled', 'cancel_confirmed', { detail: { during: 'start_children' } });
  }
  if (task.state !== 'leased') return notApplicable(task, event.type);
  return choose('awaiting_children', 'children_started', { detail: { children: event.count } });
}

/** Whether a tally decides its step, and how (R45, R46): null while it must wait. */
export function childrenVerdict(
  tally: ChildTally,
  cancelling: boolean,
): 'succeeded' | 'failed' | 'cancelled' | 'cancel_after_submit' | null {
  if (cancelling) {
    if (tally.open > 0) return null;
    return tally.succeeded === tally.total ? 'cancel_after_submit' : 'cancelled';
  }
  // Fail fast as soon as the failures exceed the tolerance, without waiting for the rest.
  if (tally.failed > tally.allowedFailures) return 'failed';
  if (tally.open > 0) return null;
  return 'succeeded';
}

/** A child became terminal: the step settles if the tally decides it, else nothing happens. */
export function decideChildrenChanged(input: DecideInput, event: ChildrenChanged): ChoiceOrRefusal {
  const { task } = input;
  if (task.state !== 'awaiting_children' && task.state !== 'cancel_requested') {
    return notApplicable(task, event.type);
  }
  const { tally } = event;
  const counts = {
    total: tally.total,
    succeeded: tally.succeeded,
    failed: tally.failed,
    open: tally.open,
    tolerated: Math.min(tally.failed, tally.allowedFailures),
  };
  switch (childrenVerdict(tally, task.state === 'cancel_requested')) {
    case null:
      return refuse(
        task,
        'children_pending',
        `${tally.open} of ${tally.total} child workflows are not finished`,
      );
    case 'succeeded':
      return choose('succeeded', 'children_succeeded', { detail: counts });
    case 'cancel_after_submit':
      return choose('succeeded', 'cancel_after_submit', { detail: counts });
    case 'cancelled':
      return choose('cancelled', 'children_cancelled', { detail: counts });
    case 'failed':
      return choose('dead', 'children_failed', {
        errorCategory: 'unknown',
        errorSummary: `${tally.failed} of ${tally.total} child workflows failed${
          tally.allowedFailures > 0 ? ` (${tally.allowedFailures} tolerated)` : ''
        }`,
        detail: counts,
      });
  }
}

/**
 * A step asked to cancel while it awaits its children holds no lease: only its children's
 * tally (or a repeated cancel) applies to it, never a worker's or the sweeper's lease event.
 */
export function cancelledWhileAwaitingChildren(input: DecideInput): boolean {
  return (
    input.task.state === 'cancel_requested' &&
    input.hasChildren === true &&
    input.event.type !== 'children_changed' &&
    input.event.type !== 'cancel'
  );
}
