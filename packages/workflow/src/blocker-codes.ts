import { deepFreeze } from './deep-freeze';

/**
 * Why a non-terminal task is not moving right now (issue 18): a contract like the reason
 * codes, one meaning each, forever. docs/blockers.md is generated from `blockerCodeMeanings`.
 */
export const blockerCodes = [
  'upstream_pending',
  'not_due',
  'no_worker',
  'queue_full',
  'lease_stale',
  'running',
  'claimable',
  'awaiting_receipt',
  'waiting_for_event',
  'cancel_pending',
  'children_pending',
  'queue_paused',
  'concurrency_limited',
  'rate_limited',
] as const;
export type BlockerCode = (typeof blockerCodes)[number];

/** One task's blocker: a stable code, a sentence with the facts, and the facts as data. */
export interface Blocker {
  readonly taskId: string;
  readonly step: string;
  readonly code: BlockerCode;
  /** One sentence for an operator, with every fact it rests on (times in UTC). */
  readonly message: string;
  /** When it ends by itself if nothing else happens; null when it depends on something else. */
  readonly until: Date | null;
  /** The facts as data: the keys `blockerCodeMeanings[code].facts` lists; times as ISO strings. */
  readonly facts: Readonly<Record<string, unknown>>;
}

/** What a code means, the facts it carries, and what its `until` is. */
export interface BlockerCodeMeaning {
  readonly meaning: string;
  readonly facts: Readonly<Record<string, string>>;
  readonly until: string;
}

/** What the sweeper does when a lease runs out (`then` of `lease_stale` and `cancel_pending`). */
const sweeperThen =
  "what the sweeper does when the lease runs out, decided by the machine's own lease-expiry rule (R10): `retry` (queued again), `dead`, `cancel` (the cancel is confirmed: nothing started); null when this process does not define the step";
const sweeperReason = 'the reason code that edge will carry, e.g. `lease_expired_effect_uncertain`';

export const blockerCodeMeanings: Readonly<Record<BlockerCode, BlockerCodeMeaning>> = deepFreeze({
  upstream_pending: {
    meaning:
      'waits for the steps it runs after; a dead one holds it until an operator replays that step',
    facts: {
      upstream: '[{ step, state }]: the steps it runs after that have not succeeded, in step order',
    },
    until: 'null: it moves when its upstream steps succeed',
  },
  not_due: {
    meaning: 'queued, but not due until a time: a retry backoff, a delay, a snooze or a start time',
    facts: {
      runAt: 'when it becomes due',
      cause:
        "`backoff` (after a failure), `delay` (the step's or the submit's `delayMs`), `snooze` (the step asked), `scheduled` (submitted with `runAt`)",
      errorCategory: 'for `backoff`: the category of the error it retries after',
      errorSummary: 'for `backoff`: that error in one line',
      retryAfterMs:
        'for `backoff`: the wait the step asked for (`StepError` `retryAfterMs`), or null; a `throttled` retry is due exactly then, any other after the backoff on top of it (R51)',
      attempt: 'the attempts made so far (for `backoff`: the one that failed)',
      reason: 'for `snooze`: the reason the step gave',
      deadlineAt: 'the deadline, when it passes before `runAt` (the task then ends dead)',
    },
    until: '`runAt`, or the deadline if that comes first',
  },
  no_worker: {
    meaning:
      'due, but no live worker both serves its queue and defines the version its workflow records (R54; a worker claims only workflows of a version it defines)',
    facts: {
      queue: 'its queue',
      workflow: 'its workflow name',
      version:
        'the version its workflow records (R54), or null for a workflow stored before versions (then a worker must know every step)',
      step: 'its step',
      workers:
        '[{ holder, queues, workflows, versions }]: every live worker and what it serves (queue names, workflow names, and `name@version` of each version it defines)',
      readySince: 'since when it has been due',
    },
    until: 'null: it moves when a worker that can run it starts',
  },
  queue_full: {
    meaning:
      'due, and every slot of its queue on the live workers that can run it holds a lease (R32)',
    facts: {
      queue: 'its queue',
      workers: 'how many live workers can run it',
      slots: 'their slots for the queue, together',
      leased: 'the leases those workers hold in the queue',
      oldestReadyAt: 'when the oldest due task of the queue became due',
      readySince: 'since when this task has been due',
    },
    until: 'null: it moves when a slot frees up',
  },
  lease_stale: {
    meaning:
      'leased by a worker that stopped renewing: its holder is not live in the registry, or the lease ran out; the sweeper settles it when the lease expires',
    facts: {
      holder: 'the lease holder',
      heartbeatAt: "the holder's last heartbeat; null when it has no registry row",
      leaseExpiresAt: 'when the lease runs out (or ran out)',
      // biome-ignore lint/suspicious/noThenProperty: a fact named by the contract; a string, never callable, so never a thenable.
      then: sweeperThen,
      reason: sweeperReason,
      attempt: 'the attempt that holds the lease',
    },
    until: '`leaseExpiresAt`',
  },
  running: {
    meaning: 'leased by a live worker that renews the lease: not blocked, it is running',
    facts: {
      holder: 'the lease holder',
      since: 'when this attempt took the lease',
      leaseExpiresAt: 'when the lease runs out unless renewed (renewed every third of it)',
      attempt: 'this attempt',
      maxAttempts: 'the attempts allowed',
    },
    until: 'null: it ends when its handler returns (or its attempt times out)',
  },
  claimable: {
    meaning:
      'due, and a live worker that can run it has a free slot: the next claim takes it (a wait here that lasts points at failing or skipped claims)',
    facts: {
      queue: 'its queue',
      readySince: 'since when it has been due',
      freeSlots: 'free slots of the queue on the live workers that can run it',
    },
    until: 'null: the next claim takes it',
  },
  awaiting_receipt: {
    meaning:
      "its effect was submitted externally and the lease released; it waits for the effect's receipt (R23)",
    facts: {
      since: 'when the effect was submitted',
      timeoutAt: 'when the sweeper stops waiting for the receipt',
      // biome-ignore lint/suspicious/noThenProperty: a fact named by the contract; a string, never callable, so never a thenable.
      then: "what happens at `timeoutAt`: `retry` or `dead` (the machine's `receipt_timeout` rule)",
      sending: '[{ channel, attempts, lastError }]: outbox messages still being delivered (R22)',
    },
    until: '`timeoutAt`',
  },
  waiting_for_event: {
    meaning: 'an event step waits for its event (R37)',
    facts: {
      name: 'the event name',
      key: 'the key the event must carry; null only for a wait an older version started when the key could not be computed (no event matches; R58 now ends such a step dead)',
      since: 'when it started waiting',
      timeoutAt: 'when the wait gives up',
      // biome-ignore lint/suspicious/noThenProperty: a fact named by the contract; a string, never callable, so never a thenable.
      then: 'what happens at `timeoutAt`: `succeed` (with its `onTimeout` output) or `dead` (R39)',
    },
    until: '`timeoutAt`, or the deadline if that comes first',
  },
  cancel_pending: {
    meaning:
      'cancel requested while leased; the worker has not reached a boundary yet (R13). Its lease is no longer renewed, so the sweeper settles it when the lease runs out',
    facts: {
      holder: 'the lease holder',
      requestedAt: 'when the cancel was requested',
      requestedBy: 'who requested it (`client`, `operator:<name>`)',
      leaseExpiresAt: 'when the lease runs out',
      // biome-ignore lint/suspicious/noThenProperty: a fact named by the contract; a string, never callable, so never a thenable.
      then: sweeperThen,
      reason: sweeperReason,
    },
    until: '`leaseExpiresAt`',
  },
  children_pending: {
    meaning:
      'awaits its child workflows (R45, R48); it settles by fixed rules once they decide it. The blocker of the oldest unfinished child says what holds the tree',
    facts: {
      total: 'how many child workflows it started',
      succeeded: 'how many of them succeeded',
      failed: 'how many ended `dead` or `cancelled`',
      open: 'how many are not finished',
      tolerated: 'how many failures its tolerance allows',
      cancelling: 'true when a cancel was asked and it waits for the children to stop',
      oldest:
        '{ workflowId, state, blocker }: the oldest unfinished child and what blocks it; null when none',
    },
    until: 'null: it moves when its children finish',
  },
  queue_paused: {
    meaning:
      'queued in a queue an operator paused (R53): no claim takes it until the queue is resumed',
    facts: {
      queue: 'its queue',
      operator: 'who paused the queue',
      reason: 'why, in their words',
      pausedAt: 'since when the queue is paused',
      runAt: 'when it is (or was) due',
    },
    until: 'null: it moves when an operator resumes the queue',
  },
  concurrency_limited: {
    meaning:
      'due, but its concurrency key holds its limit (R50): every slot of the group and key is held by another task',
    facts: {
      group: 'the concurrency group',
      key: 'the key',
      limit: 'how many tasks of the group and key may hold a slot at once',
      holders:
        '[{ taskId, workflowId, step, state, holder, since }]: the tasks holding its slots, oldest first',
      runAt: 'when it became due',
    },
    until: 'null: it moves when a holder ends (its lease expiry bounds that)',
  },
  rate_limited: {
    meaning:
      'due, but its rate limit\'s name and key has no room (R51): the grants of the last period leave no room for its cost, or a step of the key heard "too busy" and paused it for every task',
    facts: {
      name: 'the rate limit',
      key: "the key; null for the name's one bucket",
      cost: 'what a claim of it spends',
      limit:
        'the cost the limit grants per period; null when the reading process does not declare the limit',
      periodMs: 'the period; null when the reading process does not declare the limit',
      spent:
        'the cost granted within the last period, on the database clock; null when the limit is not declared there',
      nextSlotAt:
        'when a grant of its cost next fits the window (without a declared limit: when the last claim left the key blocked until); null: now',
      pausedUntil:
        'until when the key is (or was) paused; null when no step of it ever asked for a pause',
      pausedByTask: "the task whose step threw `StepError('throttled', …, { retryAfterMs })`",
      pausedByWorkflow: "that task's workflow; null when it is gone",
      pausedReason: 'the error message that paused it',
      runAt: 'when it became due',
    },
    until:
      'the later of the pause and `nextSlotAt`: a claim grants it then if nothing else took the room',
  },
} satisfies Record<BlockerCode, BlockerCodeMeaning>);
