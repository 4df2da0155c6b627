/**
 * The contract's rows for child workflows (docs/rules.md R43–R47 and the edges in docs/state-machine.md), written out by hand for
 * the children races and the engine model: the edges of a step that awaits child workflows,
 * the edges a parent step takes on its children (`parent:<task id>`), and how a step's
 * children settle it. Beside test/helpers/contract-tables.ts, whose table predates children;
 * nothing here is read from the code it checks.
 */
import type { ActorKind, ReasonCode, TaskState } from '@causeway/workflow/internal';
import { type SpecEdgeRow, specAllowsEdge } from '../helpers/contract-tables';

/** The edge table's rows of `awaiting_children` (R43–R47). */
export const specChildEdgeRows: readonly SpecEdgeRow[] = [
  { from: 'leased', to: ['awaiting_children'], reasons: ['children_started'], actors: ['worker'] },
  { from: 'pending', to: ['awaiting_children'], reasons: ['children_started'], actors: ['system'] },
  {
    from: 'awaiting_children',
    to: ['succeeded'],
    reasons: ['children_succeeded'],
    actors: ['system'],
  },
  { from: 'awaiting_children', to: ['dead'], reasons: ['children_failed'], actors: ['system'] },
  { from: 'awaiting_children', to: ['dead'], reasons: ['deadline_exceeded'], actors: ['sweeper'] },
  {
    from: 'awaiting_children',
    to: ['cancel_requested'],
    reasons: ['cancel_requested'],
    // R45: a grandparent step's failure cancels its children's steps as their parent.
    actors: ['client', 'operator', 'parent'],
  },
  {
    from: 'cancel_requested',
    to: ['cancelled'],
    reasons: ['children_cancelled'],
    actors: ['system'],
  },
  // R46: the children all succeeded before the cancel reached them.
  {
    from: 'cancel_requested',
    to: ['succeeded'],
    reasons: ['cancel_after_submit'],
    actors: ['system'],
  },
  {
    from: 'dead',
    to: ['awaiting_children'],
    reasons: ['manual_replay', 'bulk_requeue'],
    actors: ['operator'],
  },
  // R43: a child workflow's steps are submitted by its parent step.
  {
    from: null,
    to: ['queued', 'pending', 'waiting'],
    reasons: ['submitted'],
    actors: ['parent'],
  },
  // R45, R46: the parent step asks its unfinished children to cancel by ordinary cancel edges.
  {
    from: 'pending',
    to: ['cancelled'],
    reasons: ['cancelled_before_start'],
    actors: ['parent'],
  },
  { from: 'queued', to: ['cancelled'], reasons: ['cancelled_before_start'], actors: ['parent'] },
  { from: 'leased', to: ['cancel_requested'], reasons: ['cancel_requested'], actors: ['parent'] },
  { from: 'waiting', to: ['cancelled'], reasons: ['cancelled_while_waiting'], actors: ['parent'] },
];

/** Whether the contract allows the edge: the edge table of §3 with its children rows. */
export function specAllowsTreeEdge(
  from: TaskState | null,
  to: TaskState,
  reason: ReasonCode,
  actor: ActorKind,
): boolean {
  return (
    specAllowsEdge(from, to, reason, actor) ||
    specChildEdgeRows.some(
      (row) =>
        row.from === from &&
        row.to.includes(to) &&
        row.reasons.includes(reason) &&
        row.actors.includes(actor),
    )
  );
}

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
