import type { Blocker, BlockerCode } from './blocker-codes';
import type { TaskState } from './machine-table';
import type { RetryPolicy } from './retry-policy';
import type { TaskSnapshot } from './task-snapshot';
import type { Transition } from './transition';

/** What the blocker decision reads of one task, as stored (database time). */
export interface BlockerTask {
  readonly id: string;
  readonly step: string;
  readonly queue: string;
  /** The machine's view of the task (state, attempt, effect marker, run_at, deadline…). */
  readonly snapshot: TaskSnapshot;
  readonly maxAttempts: number;
  readonly leaseHolder: string | null;
  readonly leaseExpiresAt: Date | null;
  readonly receiptId: string | null;
  readonly receiptDeadlineAt: Date | null;
  readonly eventName: string | null;
  readonly eventKey: string | null;
  readonly waitSince: Date | null;
  /** The task's latest edge: the one that put it in its state (null if the log has none). */
  readonly lastEdge: Transition | null;
  /** Its outbox messages still being delivered (R22), oldest first. */
  readonly sending: readonly OutboxSending[];
}

export interface OutboxSending {
  readonly channel: string;
  readonly attempts: number;
  readonly lastError: string | null;
}

/** A worker as its registry row tells it: what it serves, and whether it still heartbeats. */
export interface RegisteredWorker {
  /** Its lease holder id (host/pid/boot id, R7). */
  readonly holder: string;
  /** The queues it claims from, each with its slots (concurrent attempts, R32). */
  readonly queues: readonly { readonly name: string; readonly slots: number }[];
  /**
   * The workflows it defines, each version with its steps (R54): it claims only tasks of a
   * version it defines. A row of an engine from before versions has none: it claims the
   * workflows whose every step it knows.
   */
  readonly workflows: readonly {
    readonly name: string;
    readonly version?: string;
    readonly steps: readonly string[];
  }[];
  /** It runs the sweeper (expired leases, deadlines, receipt and wait timeouts). */
  readonly sweeper: boolean;
  readonly heartbeatAt: Date;
  /** Heartbeating within its age-out. */
  readonly live: boolean;
}

/** Who paused a queue, why and since when (R53): claims take nothing from it meanwhile. */
export interface QueuePause {
  readonly operator: string;
  readonly reason: string;
  readonly pausedAt: Date;
}

/** A queue's load: who holds its leases, how long its due tasks have waited, its pause. */
export interface QueueLoad {
  /** Leases (running or waiting for a slot) held in the queue, by holder. */
  readonly leasedByHolder: Readonly<Record<string, number>>;
  /** When the queue's oldest due task became due; null when none is due. */
  readonly oldestReadyAt: Date | null;
  /** The queue's pause (R53); null while claims take from it. */
  readonly paused: QueuePause | null;
}

/** Everything one task's blocker is decided from; the engine reads it in one snapshot. */
export interface BlockerInput {
  readonly task: BlockerTask;
  /**
   * The steps it runs after (its definition's `after`) with their states, in step order;
   * null when this process does not define the workflow.
   */
  readonly upstream: readonly { readonly step: string; readonly state: TaskState }[] | null;
  /**
   * Its workflow's name, the version it records (R54; null or absent if stored before
   * versions) and every step the workflow was submitted with.
   */
  readonly workflow: {
    readonly name: string;
    readonly version?: string | null;
    readonly steps: readonly string[];
  };
  /** The step's policy from its definition; null when this process does not define it. */
  readonly policy: RetryPolicy | null;
  /** Every live worker, and the registry rows of the task's lease holder, live or not. */
  readonly workers: readonly RegisteredWorker[];
  /** The task's queue. */
  readonly queue: QueueLoad;
  /** Database time of the read. */
  readonly now: Date;
  /** For a step with child workflows: their counts and what blocks the oldest open one. */
  readonly children?: ChildrenFacts | null;
  /** For a queued task with a concurrency key (R50): its key and the tasks holding it. */
  readonly concurrency?: ConcurrencyFacts | null;
  /** For a queued task that spends a rate limit (R51): its (name, key)'s window and pause. */
  readonly rate?: RateFacts | null;
}

/**
 * A rate limit's (name, key) as a blocker read it (R51), at the read's database time: what
 * the grants of the last period spent, when a grant of the task's cost next fits, and the
 * pause a step of the key asked for.
 */
export interface RateFacts {
  readonly name: string;
  /** Null: the name's one bucket. */
  readonly key: string | null;
  /** What a claim of the task spends. */
  readonly cost: number;
  /** The limit and its period; null when this process does not declare the limit. */
  readonly limit: number | null;
  readonly periodMs: number | null;
  /** The cost granted within the last period; null when the limit is not declared here. */
  readonly spent: number | null;
  /**
   * When a grant of `cost` next fits (null: now). Without a declared limit: when the last
   * claim of the key left it blocked until.
   */
  readonly nextSlotAt: Date | null;
  /** The pause a `throttled` step of the key asked for, while it runs; null: none. */
  readonly pause: RateKeyPause | null;
}

/** Who paused a rate limit's key, why, and until when (R51). */
export interface RateKeyPause {
  readonly until: Date;
  /** The task whose step heard "too busy"; null if the row does not say. */
  readonly byTask: string | null;
  /** That task's workflow; null when the task is gone (retention) or unknown. */
  readonly byWorkflow: string | null;
  readonly reason: string | null;
}

/** A concurrency key as a blocker read it (R50): the tasks that hold its slots. */
export interface ConcurrencyFacts {
  readonly group: string;
  readonly key: string;
  readonly limit: number;
  /** Oldest first by the time they took the slot. */
  readonly holders: readonly {
    readonly taskId: string;
    readonly workflowId: string;
    readonly step: string;
    readonly state: TaskState;
    readonly holder: string | null;
    readonly since: Date;
  }[];
}

/** What the engine read of a step's child workflows for its blocker (R48). */
export interface ChildrenFacts {
  readonly total: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly open: number;
  readonly allowedFailures: number;
  /** The oldest unfinished child, with its own blocker when it has one. */
  readonly oldest: {
    readonly workflowId: string;
    readonly name: string;
    readonly state: string;
    readonly blocker: Blocker | null;
  } | null;
}

/** A blocker of `input`'s task. */
export function blockerOf(
  input: BlockerInput,
  code: BlockerCode,
  message: string,
  until: Date | null,
  facts: Readonly<Record<string, unknown>>,
): Blocker {
  return {
    taskId: input.task.id,
    step: input.task.step,
    code,
    message: `${input.task.step}: ${message}`,
    until,
    facts,
  };
}

/** A time as the facts carry it (JSON-ready). */
export function isoOf(at: Date | null): string | null {
  return at === null ? null : at.toISOString();
}

/** The earlier of two times (null counts as never). */
export function earliest(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b;
  if (b === null) return a;
  return a.getTime() <= b.getTime() ? a : b;
}

/** The live workers. */
export function liveWorkers(input: BlockerInput): readonly RegisteredWorker[] {
  return input.workers.filter((worker) => worker.live);
}

/** A clause for when no live worker runs the sweeper, which a timeout or an expiry waits on. */
export function sweeperAbsence(input: BlockerInput): string {
  return liveWorkers(input).some((worker) => worker.sweeper)
    ? ''
    : '; but no live worker runs the sweeper, so nothing acts on it until one starts';
}
