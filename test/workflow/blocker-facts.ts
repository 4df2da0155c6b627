import {
  type BlockerInput,
  type BlockerTask,
  defaultRetryPolicy,
  type QueueLoad,
  type ReasonCode,
  type RegisteredWorker,
  type RetryPolicy,
  type TaskState,
  type Transition,
} from '@causeway/workflow/internal';
import { taskSnapshot } from './task-snapshots';

/**
 * Blocker inputs for the pure decision's tests, written as small changes to one ordinary
 * case: a queued task `publish` of workflow `note` on queue `io`, due at `now`.
 */
export const now = new Date('2026-05-04T12:00:00.000Z');

export const at = (offsetMs: number) => new Date(now.getTime() + offsetMs);

export function edge(reason: ReasonCode, overrides: Partial<Transition> = {}): Transition {
  return {
    id: '1',
    workflowId: 'wf',
    taskId: 't1',
    step: 'publish',
    from: null,
    to: 'queued',
    reason,
    errorCategory: null,
    errorSummary: null,
    actor: 'client',
    attempt: 0,
    at: at(-60_000),
    detail: null,
    ...overrides,
  };
}

export function task(
  state: TaskState,
  overrides: Partial<Omit<BlockerTask, 'snapshot'>> & {
    snapshot?: Partial<BlockerTask['snapshot']>;
  } = {},
): BlockerTask {
  const { snapshot, ...rest } = overrides;
  return {
    id: 't1',
    step: 'publish',
    queue: 'io',
    maxAttempts: 3,
    leaseHolder: null,
    leaseExpiresAt: null,
    receiptId: null,
    receiptDeadlineAt: null,
    eventName: null,
    eventKey: null,
    waitSince: null,
    lastEdge: edge('submitted'),
    sending: [],
    ...rest,
    snapshot: taskSnapshot(now, { state, ...snapshot }),
  };
}

export function worker(
  holder: string,
  overrides: Partial<RegisteredWorker> = {},
): RegisteredWorker {
  return {
    holder,
    queues: [{ name: 'io', slots: 1 }],
    workflows: [{ name: 'note', steps: ['render', 'publish'] }],
    sweeper: true,
    heartbeatAt: at(-1_000),
    live: true,
    ...overrides,
  };
}

export const policy = (overrides: Partial<RetryPolicy> = {}): RetryPolicy => ({
  ...defaultRetryPolicy,
  maxAttempts: 3,
  ...overrides,
});

export function input(
  overrides: Partial<Omit<BlockerInput, 'queue'>> & { queue?: Partial<QueueLoad> } = {},
): BlockerInput {
  const { queue, ...rest } = overrides;
  return {
    task: task('queued'),
    upstream: [{ step: 'render', state: 'succeeded' }],
    workflow: { name: 'note', steps: ['render', 'publish'] },
    policy: policy(),
    workers: [worker('w1')],
    now,
    ...rest,
    queue: { leasedByHolder: {}, oldestReadyAt: now, paused: null, ...queue },
  };
}
