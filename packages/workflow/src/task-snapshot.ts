import type { ErrorCategory } from './error-categories';
import type { EdgeRule, TaskState } from './machine-table';

/** What the machine needs to know about a task to choose its next edge. */
export interface TaskSnapshot {
  readonly state: TaskState;
  /** Claims made in the current replay round; the first run is attempt 1. */
  readonly attempt: number;
  /** The current attempt persisted its "effect started" marker (boundary or checkpoint), R10. */
  readonly effectStarted: boolean;
  /**
   * The external system's acceptance id of this task's effect, recorded before anything
   * else (R21). With it, a re-run asks for the outcome instead of resubmitting, so a lost
   * lease is no longer "effect uncertain".
   */
  readonly evidence: string | null;
  readonly replayCount: number;
  /** When a queued task becomes eligible (database time). */
  readonly runAt: Date | null;
  /** Absolute deadline (acceptance + budget), R28/R29; null when none. */
  readonly deadlineAt: Date | null;
  readonly lastErrorCategory: ErrorCategory | null;
  readonly lastError: string | null;
  /** When an event step's wait gives up (R39); null unless `waiting`. */
  readonly waitTimeoutAt: Date | null;
}

/** What the machine decided beyond the edge's row: a time to run at and the error, if any. */
export interface EdgeParameters {
  readonly now: Date;
  /** When the task may be claimed, for an edge whose `runAt` is `delay`, `backoff` or `until`. */
  readonly decidedRunAt: Date | null;
  /** When the wait gives up, for an edge whose `wait` is `start`. */
  readonly decidedWaitTimeoutAt?: Date | null;
  readonly errorCategory: ErrorCategory | null;
  readonly errorSummary: string | null;
}

/**
 * The task after an edge: its row's effects (`edges.ts`) applied to the snapshot, and an
 * edge's error recorded as the task's last error.
 */
export function nextSnapshot(
  rule: EdgeRule,
  task: TaskSnapshot,
  parameters: EdgeParameters,
): TaskSnapshot {
  const { now, decidedRunAt, errorCategory, errorSummary } = parameters;
  const decided = rule.runAt === 'delay' || rule.runAt === 'backoff' || rule.runAt === 'until';
  if (decided && decidedRunAt === null) {
    throw new Error(`${rule.from} → ${rule.to} needs a run_at the decision did not compute`);
  }
  if (rule.wait === 'start' && (parameters.decidedWaitTimeoutAt ?? null) === null) {
    throw new Error(`${rule.from} → ${rule.to} starts a wait the decision gave no timeout`);
  }
  const replayed = rule.replay === 'next';
  return {
    state: rule.to,
    attempt: nextAttempt(rule, task.attempt),
    effectStarted: rule.marker === 'reset' ? false : task.effectStarted,
    evidence: task.evidence,
    replayCount: replayed ? task.replayCount + 1 : task.replayCount,
    runAt:
      rule.runAt === 'now'
        ? now
        : decided
          ? decidedRunAt
          : rule.runAt === 'clear'
            ? null
            : task.runAt,
    // A replay is a human decision: it inherits no deadline.
    deadlineAt: replayed ? null : task.deadlineAt,
    lastErrorCategory: errorCategory ?? task.lastErrorCategory,
    lastError: errorCategory === null ? task.lastError : errorSummary,
    waitTimeoutAt:
      rule.wait === 'start'
        ? (parameters.decidedWaitTimeoutAt ?? null)
        : rule.wait === 'clear'
          ? null
          : task.waitTimeoutAt,
  };
}

function nextAttempt(rule: EdgeRule, attempt: number): number {
  switch (rule.attempt) {
    case 'next':
      return attempt + 1;
    case 'same':
      return attempt;
    case 'refund':
      return attempt - 1;
    case 'reset':
      return 0;
  }
}
