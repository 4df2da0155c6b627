/**
 * How a step's children count and settle it (docs/rules.md R45, R46), written out by hand for
 * the children races and the engine model. The edges of child workflows are the contract
 * table's (`specAllowsEdge` in test/helpers/contract-tables.ts, with its children and parent
 * rows); nothing here is read from the code it checks.
 */
import type { ReasonCode } from '@causeway/workflow/internal';

/** How a child workflow counts for its step (R45): still open, succeeded, or failed. */
export type ChildClass = 'open' | 'succeeded' | 'failed';

/** R45: `dead` and `cancelled` children are failures; a child not yet terminal is open. */
export function specChildClass(state: string): ChildClass {
  if (state === 'succeeded') return 'succeeded';
  if (state === 'dead' || state === 'cancelled') return 'failed';
  return 'open';
}

/**
 * How a step's children settle it (R45, R46), or null while it must wait: awaiting, it fails as
 * soon as the failures exceed what it tolerates and succeeds once every child is terminal;
 * under a cancel request it waits for every child, and succeeds only if all of them did.
 */
export function specChildrenSettle(
  classes: readonly ChildClass[],
  tolerated: number,
  cancelRequested: boolean,
): ReasonCode | null {
  const failed = classes.filter((which) => which === 'failed').length;
  const open = classes.filter((which) => which === 'open').length;
  if (cancelRequested) {
    if (open > 0) return null;
    return failed === 0 ? 'cancel_after_submit' : 'children_cancelled';
  }
  if (failed > tolerated) return 'children_failed';
  return open > 0 ? null : 'children_succeeded';
}
