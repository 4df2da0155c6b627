import {
  isAwaitReceipt,
  isSendRequest,
  isSnooze,
  isStartChildren,
} from '@causeway/workflow/internal';
import { type AbortReason, CancelConfirmed, LeaseLost } from './step-signals';

/** How a step's handler ended, as its worker saw it (before the result is written). */
export const handlerOutcomeMeanings = Object.freeze({
  completed: 'returned an output',
  snoozed: 'returned `snooze(...)`',
  sent: 'returned `send(...)` (an outbox message)',
  awaiting_receipt: 'returned `awaitReceipt(...)`',
  children_started: 'returned `startChildren(...)` or `startChild(...)`',
  failed: 'threw an error (retried or not, by its category)',
  timed_out: 'stopped by its attempt timeout or the workflow deadline',
  cancelled: 'stopped at a boundary that confirmed a cancel',
  lease_lost: 'stopped because its lease was lost',
  shutdown: 'stopped by the worker shutting down',
} as const);
export type HandlerOutcome = keyof typeof handlerOutcomeMeanings;
export const handlerOutcomes = Object.keys(handlerOutcomeMeanings) as readonly HandlerOutcome[];

/** One run of a step's handler by a worker of this engine. */
export interface HandlerRun {
  readonly workflow: string;
  readonly step: string;
  readonly queue: string;
  readonly outcome: HandlerOutcome;
  /** Wall time from calling the handler to its return or throw. */
  readonly seconds: number;
}

export type HandlerRunListener = (run: HandlerRun) => void;

/** The listeners of an engine's handler runs (the API's metrics, for one). */
export class HandlerRunObservers {
  private readonly listeners = new Set<HandlerRunListener>();

  /** Calls `listener` after every handler run from now on; returns the way to stop. */
  add(listener: HandlerRunListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get observed(): boolean {
    return this.listeners.size > 0;
  }

  /** A listener that throws is not the step's failure: it is dropped for this run. */
  report(run: HandlerRun): void {
    for (const listener of this.listeners) {
      try {
        listener(run);
      } catch {
        // A metrics listener must never change what the worker does with the result.
      }
    }
  }
}

/** The outcome of a handler that returned `result`. */
export function returnedOutcome(result: unknown): HandlerOutcome {
  if (isSnooze(result)) return 'snoozed';
  if (isSendRequest(result)) return 'sent';
  if (isAwaitReceipt(result)) return 'awaiting_receipt';
  if (isStartChildren(result)) return 'children_started';
  return 'completed';
}

/** The outcome of a handler that threw `error` while its signal was aborted for `reason`. */
export function thrownOutcome(error: unknown, reason: AbortReason | null): HandlerOutcome {
  if (error instanceof CancelConfirmed) return 'cancelled';
  if (error instanceof LeaseLost || reason === 'lease_lost') return 'lease_lost';
  if (reason === 'shutdown') return 'shutdown';
  if (reason === 'attempt_timeout' || reason === 'deadline') return 'timed_out';
  return 'failed';
}
