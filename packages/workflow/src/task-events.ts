import type { Actor } from './actors';
import type { ErrorCategory } from './error-categories';

/** Everything that can happen to a task. Who caused it is part of the event. */
export type TaskEvent =
  /** Every upstream step succeeded. */
  | { readonly type: 'promote' }
  /** A worker claims the task (SKIP LOCKED in the engine). */
  | { readonly type: 'claim'; readonly actor: Actor }
  /** The step returned an output: its effect is confirmed. */
  | { readonly type: 'complete'; readonly actor: Actor }
  /** The step's effect was accepted externally; wait for the receipt. */
  | { readonly type: 'await_receipt'; readonly actor: Actor }
  /** The attempt failed (thrown error, StepError, or attempt timeout as `timeout`). */
  | {
      readonly type: 'fail';
      readonly actor: Actor;
      readonly category: ErrorCategory;
      readonly summary: string;
      readonly retryAfterMs?: number;
    }
  /** The lease ran out without renewal (the sweeper saw it). */
  | { readonly type: 'lease_expired'; readonly actor: Actor }
  /**
   * The step asked to run again later (R36): after `forMs` of database time, or at `untilMs`
   * (epoch ms), with its reason.
   */
  | {
      readonly type: 'snooze';
      readonly actor: Actor;
      readonly forMs: number | null;
      readonly untilMs: number | null;
      readonly reason: string;
    }
  /** Graceful shutdown hands the task back. */
  | { readonly type: 'release'; readonly actor: Actor }
  /** The step reached a side-effect boundary: a pending cancel is confirmed here. */
  | { readonly type: 'boundary'; readonly actor: Actor }
  /** `reason`: the requester's words, kept on the edge's detail. */
  | { readonly type: 'cancel'; readonly actor: Actor; readonly reason?: string }
  /**
   * A debounced submit of the same key replaced the task's workflow before it started (R52);
   * `by` is the new workflow's id.
   */
  | { readonly type: 'supersede'; readonly actor: Actor; readonly by: string }
  | { readonly type: 'receipt_confirmed'; readonly actor: Actor }
  | {
      readonly type: 'receipt_rejected';
      readonly actor: Actor;
      readonly category: ErrorCategory;
      readonly summary: string;
    }
  | { readonly type: 'receipt_timeout'; readonly actor: Actor }
  /**
   * The absolute deadline passed while the task waited in the queue (the system ends it) or
   * for its event (the sweeper, its actor, ends it).
   */
  | { readonly type: 'deadline_passed'; readonly actor: Actor }
  /**
   * The event an event step waits for arrived (R38); `eventId` names the stored event and
   * `reason` is its sender's, kept on the edge's detail like an operator's reason.
   */
  | {
      readonly type: 'event_received';
      readonly actor: Actor;
      readonly eventId: string;
      readonly reason?: string;
    }
  /** An event step's wait reached its timeout (R39). */
  | { readonly type: 'wait_timeout'; readonly actor: Actor }
  /**
   * The step's `run` returned `startChildren(...)` (R43): `count` child workflows are written
   * with this edge. Under a cancel request the step starts none and is cancelled instead (R46).
   */
  | { readonly type: 'start_children'; readonly actor: Actor; readonly count: number }
  /**
   * A child workflow of a step awaiting its children became terminal (R45): the tally is of
   * all its children as they are now, counted by the engine under the step's lock.
   */
  | { readonly type: 'children_changed'; readonly actor: Actor; readonly tally: ChildTally }
  | {
      readonly type: 'replay';
      readonly actor: Actor;
      readonly reason: string;
      readonly bulk: boolean;
    };

/** A step's child workflows by outcome, and how many failures its tolerance allows (R45). */
export interface ChildTally {
  readonly total: number;
  readonly succeeded: number;
  /** Ended `dead` or `cancelled`. */
  readonly failed: number;
  /** Not terminal yet. */
  readonly open: number;
  /** Failures the step tolerates; 0 without a tolerance (fail fast). */
  readonly allowedFailures: number;
}

export type TaskEventType = TaskEvent['type'];
