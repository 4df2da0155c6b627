import type { TaskSnapshot } from '@causeway/workflow/internal';

/** A task as the machine sees it: queued at attempt 0 and due at `runAt`, with `overrides`. */
export function taskSnapshot(runAt: Date, overrides: Partial<TaskSnapshot> = {}): TaskSnapshot {
  return {
    state: 'queued',
    attempt: 0,
    effectStarted: false,
    evidence: null,
    replayCount: 0,
    runAt,
    deadlineAt: null,
    lastErrorCategory: null,
    lastError: null,
    waitTimeoutAt: null,
    ...overrides,
  };
}
