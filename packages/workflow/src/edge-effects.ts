/**
 * What an edge does to a task's columns besides its state, as closed sets. Every row of the
 * edge table (`edges.ts`) declares one value of each; the pure machine, the engine's full
 * decision, the one-statement claim and settle, and the generated docs all read them there.
 */

/** The lease (holder, epoch, expiry): taken by a claim, kept while it runs, released after. */
export const leaseEffects = ['take', 'keep', 'release'] as const;
export type LeaseEffect = (typeof leaseEffects)[number];

/**
 * The attempt counter: `next` for a claim, `same` for most edges, `refund` when a shutdown
 * hands back an attempt that started nothing, `reset` when an operator replays a dead task.
 */
export const attemptEffects = ['next', 'same', 'refund', 'reset'] as const;
export type AttemptEffect = (typeof attemptEffects)[number];

/**
 * When the task may be claimed next (`run_at`): `now`; after the step's `delay` (R36: now
 * when it has none); after a `backoff` the machine computes from the retry policy; `until`
 * the time the step asked for (a snooze); `clear` (not claimable from this state); or `keep`.
 */
export const runAtEffects = ['now', 'delay', 'backoff', 'until', 'clear', 'keep'] as const;
export type RunAtEffect = (typeof runAtEffects)[number];

/** The attempt's "effect started" marker (R10): `reset` when a new attempt may start, else `keep`. */
export const markerEffects = ['reset', 'keep'] as const;
export type MarkerEffect = (typeof markerEffects)[number];

/**
 * The receipt being waited for and its deadline (R23): `await` sets them from the request
 * (an edge into `awaiting_receipt`), `clear` removes them, `keep` leaves them.
 */
export const receiptEffects = ['await', 'clear', 'keep'] as const;
export type ReceiptEffect = (typeof receiptEffects)[number];

/** A replay: `next` counts it and drops the inherited deadline; `keep` leaves both. */
export const replayEffects = ['next', 'keep'] as const;
export type ReplayEffect = (typeof replayEffects)[number];

/**
 * An event step's wait (R37, R39): `start` records when it began and when it gives up (now +
 * the step's `timeoutMs`) with the event it waits for; `clear` removes them; `keep` leaves them.
 */
export const waitEffects = ['start', 'clear', 'keep'] as const;
export type WaitEffect = (typeof waitEffects)[number];

/** Everything an edge does to a task row besides its state and last error. */
export interface EdgeEffects {
  readonly lease: LeaseEffect;
  readonly attempt: AttemptEffect;
  readonly runAt: RunAtEffect;
  readonly marker: MarkerEffect;
  readonly receipt: ReceiptEffect;
  readonly replay: ReplayEffect;
  readonly wait: WaitEffect;
}

/** One-line meaning of each effect value, for the generated docs. */
export const edgeEffectMeanings = Object.freeze({
  lease: {
    take: 'new holder, epoch + 1, expiry = now + lease',
    keep: 'unchanged',
    release: 'holder and expiry cleared',
  },
  attempt: {
    next: 'attempt + 1',
    same: 'unchanged',
    refund: 'attempt − 1 (the attempt started nothing)',
    reset: 'attempt = 0',
  },
  runAt: {
    now: 'run_at = now',
    delay: "run_at = now + the step's delayMs (now when it has none)",
    backoff: 'run_at = now + backoff (retry policy)',
    until: 'run_at = the time the step asked for (snooze)',
    clear: 'run_at = null',
    keep: 'unchanged',
  },
  marker: { reset: 'effect_started = false', keep: 'unchanged' },
  receipt: {
    await: 'receipt id and deadline set from the request',
    clear: 'receipt id and deadline cleared',
    keep: 'unchanged',
  },
  replay: { next: 'replay_count + 1, deadline cleared', keep: 'unchanged' },
  wait: {
    start: "wait since = now, gives up at now + the step's timeoutMs, event name and key set",
    clear: 'wait columns cleared',
    keep: 'unchanged',
  },
} satisfies { readonly [K in keyof EdgeEffects]: Readonly<Record<EdgeEffects[K], string>> });
