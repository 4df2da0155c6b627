import type { Blocker } from './blocker-codes';
import { type BlockerInput, blockerOf } from './blocker-input';

/**
 * A step awaiting its child workflows (R48): the counts, and the blocker of the oldest
 * unfinished child, so "why isn't it moving" follows the tree down to the leaf that holds it.
 */
export function childrenBlocker(input: BlockerInput): Blocker {
  const facts = input.children;
  const cancelling = input.task.snapshot.state === 'cancel_requested';
  if (facts == null) {
    return blockerOf(input, 'children_pending', 'awaiting its child workflows', null, {
      total: null,
      succeeded: null,
      failed: null,
      open: null,
      tolerated: null,
      cancelling,
      oldest: null,
    });
  }
  const counts = [`${facts.succeeded} succeeded`, `${facts.open} unfinished`];
  if (facts.failed > 0) counts.push(`${facts.failed} failed`);
  const tolerance =
    facts.allowedFailures > 0
      ? ` (tolerated ${Math.min(facts.failed, facts.allowedFailures)} of ${facts.allowedFailures})`
      : '';
  const oldest = facts.oldest;
  const leaf =
    oldest === null
      ? ''
      : `; the oldest unfinished, ${oldest.name} ${oldest.workflowId}, is ${oldest.state}${
          oldest.blocker === null ? '' : `: ${oldest.blocker.message}`
        }`;
  const what = cancelling ? 'cancel asked; waiting for' : 'awaiting';
  return blockerOf(
    input,
    'children_pending',
    `${what} ${facts.total} child workflow${facts.total === 1 ? '' : 's'}: ${counts.join(', ')}${tolerance}${leaf}`,
    null,
    {
      total: facts.total,
      succeeded: facts.succeeded,
      failed: facts.failed,
      open: facts.open,
      tolerated: facts.allowedFailures,
      cancelling,
      oldest:
        oldest === null
          ? null
          : {
              workflowId: oldest.workflowId,
              state: oldest.state,
              blocker: oldest.blocker,
            },
    },
  );
}
