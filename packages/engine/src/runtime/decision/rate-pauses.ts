import type { RatePause } from '../../db/rate/rate-pause-write';
import type { TaskRecord } from '../../db/rows';
import type { NewTransitionRow } from '../../db/transition-row';

/**
 * The rate limits to pause (R51): a step that spends one failed `throttled` with the wait the
 * platform asked for (`retryAfterMs` on its edge), so its (name, key) is full for everyone
 * until then, not only for the task that heard it.
 */
export function ratePausesOf(
  transitions: readonly NewTransitionRow[],
  tasks: ReadonlyMap<string, TaskRecord>,
): RatePause[] {
  return transitions.flatMap((row) => {
    const waitMs = row.detail?.retryAfterMs;
    const rate = row.taskId === null ? undefined : tasks.get(row.taskId)?.rate;
    if (row.errorCategory !== 'throttled' || typeof waitMs !== 'number' || !rate) return [];
    return [
      {
        name: rate.name,
        key: rate.key,
        waitMs,
        taskId: row.taskId as string,
        reason: row.errorSummary ?? 'throttled',
      },
    ];
  });
}
