import type { Blocker } from './blocker-codes';
import {
  type BlockerInput,
  blockerOf,
  isoOf,
  type QueuePause,
  sweeperAbsence,
} from './blocker-input';
import { moment } from './time-phrases';

/**
 * A `queued` task of a paused queue (R53), due or not: no claim takes it until an operator
 * resumes the queue, so the pause is what holds it. A deadline still ends it (the sweeper
 * does not claim).
 */
export function pausedBlocker(input: BlockerInput, pause: QueuePause): Blocker {
  const { task, now } = input;
  const runAt = task.snapshot.runAt;
  const due =
    runAt === null || runAt.getTime() <= now.getTime() ? 'due' : `due at ${moment(runAt, now)}`;
  const deadlineAt = task.snapshot.deadlineAt;
  const deadline =
    deadlineAt === null
      ? ''
      : `; its deadline ${deadlineAt.getTime() <= now.getTime() ? 'passed' : 'comes'} at ${moment(deadlineAt, now)}: the sweeper ends it dead then if it is still queued (deadline_exceeded_before_start)${sweeperAbsence(input)}`;
  return blockerOf(
    input,
    'queue_paused',
    `${due}, but queue "${task.queue}" is paused: ${pause.operator} paused it at ${moment(pause.pausedAt, now)} (${JSON.stringify(pause.reason)}); no claim takes it until an operator resumes the queue${deadline}`,
    null,
    {
      queue: task.queue,
      operator: pause.operator,
      reason: pause.reason,
      pausedAt: isoOf(pause.pausedAt),
      runAt: isoOf(runAt),
    },
  );
}
