import type { TaskView } from '@causeway/engine';

/** A task's edges without ids and times, for exact comparisons. */
export function edges(task: TaskView) {
  return task.transitions.map((row) => ({
    from: row.from,
    to: row.to,
    reason: row.reason,
    actor: row.actor,
    attempt: row.attempt,
  }));
}

/**
 * The log of a one-step task whose first worker died mid-step: leased by `first`, its lease
 * expired and the sweeper (run by `second`'s engine) re-queued it, then `second` re-ran it.
 */
export function reRunAfterLeaseExpiry(first: string, second: string): ReturnType<typeof edges> {
  return [
    { from: null, to: 'queued', reason: 'submitted', actor: 'client', attempt: 0 },
    {
      from: 'queued',
      to: 'leased',
      reason: 'lease_acquired',
      actor: `worker:${first}`,
      attempt: 1,
    },
    {
      from: 'leased',
      to: 'queued',
      reason: 'lease_expired',
      actor: `sweeper:${second}`,
      attempt: 1,
    },
    {
      from: 'queued',
      to: 'leased',
      reason: 'lease_acquired',
      actor: `worker:${second}`,
      attempt: 2,
    },
    { from: 'leased', to: 'succeeded', reason: 'completed', actor: `worker:${second}`, attempt: 2 },
  ];
}
