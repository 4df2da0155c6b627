import type { EdgeRule } from './machine-table';
import type { TaskEdge } from './task-machine';

/** A derivation of a one-statement path from the machine and the edge table, or why not. */
export type Derived<T> =
  | { readonly ok: true; readonly outcomes: T }
  | { readonly ok: false; readonly reason: string };

/**
 * Why one SQL statement cannot write this row's effects as constants, or null if it can: a
 * backoff is computed per task by the retry policy, a snooze's time comes from the step, and a
 * receipt comes with the request, and a wait's key and timeout are per step. A `delay` is written as now: the engine leaves a result that
 * would make a delayed step ready to the full decision.
 */
export function inexpressibleEffects(rule: EdgeRule): string | null {
  const edge = `${rule.from ?? '∅'} → ${rule.to}`;
  if (rule.runAt === 'backoff') return `${edge} sets run_at to a backoff the machine computes`;
  if (rule.runAt === 'until') return `${edge} sets run_at to the time a step asked for`;
  if (rule.receipt === 'await') return `${edge} awaits a receipt that comes with the request`;
  if (rule.wait === 'start') return `${edge} starts a wait whose key and timeout are per step`;
  return null;
}

/** Why the statement cannot log this edge as a constant row, or null if it can. */
export function inexpressibleEdge(edge: TaskEdge): string | null {
  if (edge.errorCategory !== null || edge.errorSummary !== null) {
    return `${edge.from} → ${edge.to} (${edge.reason}) records an error`;
  }
  if (edge.detail !== null) return `${edge.from} → ${edge.to} (${edge.reason}) has a detail`;
  return null;
}

/** Whether two rows do the same to a task's columns. */
export function sameEffects(a: EdgeRule, b: EdgeRule): boolean {
  return (
    a.lease === b.lease &&
    a.attempt === b.attempt &&
    a.runAt === b.runAt &&
    a.marker === b.marker &&
    a.receipt === b.receipt &&
    a.replay === b.replay &&
    a.wait === b.wait
  );
}
