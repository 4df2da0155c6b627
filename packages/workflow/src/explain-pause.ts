import type { QueuePause } from './blocker-input';
import type { ExplanationNote } from './explain';

/**
 * The note `explain` adds for a queued step of a paused queue (R53), at the pause's time:
 * who paused the queue and why, and that no claim takes the step until a resume.
 */
export function queuePausedNote(step: string, queue: string, pause: QueuePause): ExplanationNote {
  return {
    at: pause.pausedAt,
    step,
    text: `queue "${queue}" paused by ${pause.operator} (${JSON.stringify(pause.reason)}): no claim takes it until an operator resumes the queue`,
  };
}
