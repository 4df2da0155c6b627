/**
 * An operator's replay of a dead step (R39, R47): a human decision, so the row gets a fresh
 * attempt budget and no deadline; a step with children awaits them again.
 */
import {
  type ChoiceOrRefusal,
  choose,
  type DecideInput,
  notApplicable,
  refuse,
  waitFrom,
} from './machine-choice';
import type { TaskEvent } from './task-events';

type Replay = Extract<TaskEvent, { type: 'replay' }>;

export function decideReplay(input: DecideInput, event: Replay): ChoiceOrRefusal {
  const { task } = input;
  if (task.state !== 'dead') return notApplicable(task, event.type);
  if (!event.actor.name || event.reason.trim().length === 0) {
    return refuse(task, 'invalid_operator_request', 'a replay needs an operator name and a reason');
  }
  // An event step whose key, or a map step whose list, still fails would wait for nothing
  // (R58): the operator is told.
  if ((input.policy.wait !== null || input.policy.map) && input.inputProblem != null) {
    return refuse(
      task,
      'step_input_failed',
      `the step's ${input.policy.map ? 'list' : 'event key'} still fails: ${input.inputProblem.summary}`,
    );
  }
  // A step that started children awaits them again: dead ones replayed, the ones its
  // failure cancelled started anew, succeeded ones kept (R47).
  if (input.policy.map || input.hasChildren === true) {
    return choose('awaiting_children', event.bulk ? 'bulk_requeue' : 'manual_replay', {
      detail: { operatorReason: event.reason, replayCount: task.replayCount + 1 },
    });
  }
  // A replay is a human decision: the row gives a fresh attempt budget and no deadline;
  // an event step waits again, with a fresh timeout (R39).
  return choose(
    input.policy.wait === null ? 'queued' : 'waiting',
    event.bulk ? 'bulk_requeue' : 'manual_replay',
    {
      detail: { operatorReason: event.reason, replayCount: task.replayCount + 1 },
      ...waitFrom(input),
    },
  );
}
