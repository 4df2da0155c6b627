/**
 * Where a queued task with a priority stands in its queue (R49), as the engine counted it from
 * the queued tasks it read: `explain` gets it as an input, so the narrative stays a pure
 * function of what was read. Only what is still queued can be counted honestly: once the
 * tasks it went ahead of are claimed or retried, their run_at of the time is gone.
 */
export interface TaskPriorityPlace {
  readonly step: string;
  readonly queue: string;
  /** Seconds (R49): claims take the smallest `run_at − priority` first. */
  readonly priority: number;
  /** Queued tasks of the queue with an earlier run_at that it goes ahead of. */
  readonly olderBehind: number;
  /** Queued tasks of the queue with a later run_at that go ahead of it. */
  readonly newerAhead: number;
}

/** "publish: priority 120 s: jumps 43 older queued tasks of queue "network"". */
export function priorityLine(place: TaskPriorityPlace): string {
  const tasks = (count: number, kind: string) =>
    `${count} ${kind} queued task${count === 1 ? '' : 's'} of queue ${JSON.stringify(place.queue)}`;
  const jumps =
    place.olderBehind > 0 || place.priority > 0
      ? [`jumps ${tasks(place.olderBehind, 'older')}`]
      : [];
  const jumped =
    place.newerAhead > 0 || place.priority < 0
      ? [`${tasks(place.newerAhead, 'newer')} go${place.newerAhead === 1 ? 'es' : ''} ahead of it`]
      : [];
  return `${place.step}: priority ${place.priority} s: ${[...jumps, ...jumped].join(', ')}`;
}
