/**
 * What settles a step that awaits child workflows (R45, R46), as the contract words it, for the
 * children property tests: written from docs/rules.md, never from packages/workflow/src.
 */
import type { ChildTally, ReasonCode, TaskState } from '@causeway/workflow/internal';

/** One child workflow: open until it ends; `failed` is dead or cancelled (R45). */
export type ChildOutcome = 'open' | 'succeeded' | 'failed';

export interface ParentChildren {
  /** In input order. */
  readonly outcomes: ChildOutcome[];
  readonly allowedFailures: number;
}

/** The tally the engine counts from a step's children. */
export function tallyOf(children: ParentChildren): ChildTally {
  const count = (outcome: ChildOutcome) =>
    children.outcomes.filter((candidate) => candidate === outcome).length;
  return {
    total: children.outcomes.length,
    succeeded: count('succeeded'),
    failed: count('failed'),
    open: count('open'),
    allowedFailures: children.allowedFailures,
  };
}

/**
 * The edge a step's children decide, or null while they decide nothing. R45: when every child
 * is terminal, or as soon as the failures exceed the tolerance: `children_succeeded` or
 * `children_failed`. R46, under a cancel: once every child is terminal, `cancelled`
 * (`children_cancelled`), or `succeeded` (`cancel_after_submit`) if they all succeeded first.
 */
export function specChildrenVerdict(
  children: ParentChildren,
  cancelling: boolean,
): { readonly to: TaskState; readonly reason: ReasonCode } | null {
  const allTerminal = !children.outcomes.includes('open');
  if (cancelling) {
    if (!allTerminal) return null;
    return children.outcomes.every((outcome) => outcome === 'succeeded')
      ? { to: 'succeeded', reason: 'cancel_after_submit' }
      : { to: 'cancelled', reason: 'children_cancelled' };
  }
  const failures = children.outcomes.filter((outcome) => outcome === 'failed').length;
  if (failures > children.allowedFailures) return { to: 'dead', reason: 'children_failed' };
  return allTerminal ? { to: 'succeeded', reason: 'children_succeeded' } : null;
}
