import { childrenAwaitingState, formatActor } from '@causeway/workflow/internal';
import type { Transaction } from 'kysely';
import { cancelAskersRead } from '../../db/children/cancel-askers';
import type { CausewayDatabase } from '../../db/schema';
import { workflowLockWithTasks } from '../../db/settle/workflow-lock';
import type { ChildChange } from '../decision/child-effects';
import type { ApplyContext } from '../decision/event-request';
import { childrenRestart } from './child-restarts';

/**
 * Children that end `cancelled` by their step's own ask while the step awaits its children
 * again, started again in their places instead of being counted (R47): a step leaves
 * `awaiting_children` in the transaction that asks its children to cancel, so an ask of its
 * own that lands on it awaiting is a leftover of an earlier round, a straggler that its
 * failure cancelled and that confirmed only after the replay. A child cancelled by anyone
 * else counts as a failure. Runs under the children's locks (their decision's), and takes
 * their steps' workflows' after them, as a child's end always does. Returns the changes whose
 * child started again: their step's tally stays as it was (one open child for another).
 */
export async function leftoverCancelsRestart(
  tx: Transaction<CausewayDatabase>,
  context: ApplyContext,
  changes: readonly ChildChange[],
): Promise<ReadonlySet<ChildChange>> {
  const ended = changes.filter((change) => change.to === 'cancelled');
  if (ended.length === 0) return new Set();
  const parents = await workflowLockWithTasks(
    tx,
    [...new Set(ended.map((change) => change.parentWorkflowId))],
    { skipLocked: false },
  );
  const awaiting = new Set(
    parents.tasks.filter((task) => task.state === childrenAwaitingState).map((task) => task.id),
  );
  const candidates = ended.filter((change) => awaiting.has(change.parentTaskId));
  if (candidates.length === 0) return new Set();
  const askers = await cancelAskersRead(
    tx,
    candidates.map((change) => change.childWorkflowId),
  );
  const leftovers = askers.filter(
    (child) => child.askedBy === formatActor({ kind: 'parent', name: child.parentTaskId }),
  );
  if (leftovers.length === 0) return new Set();
  await childrenRestart(tx, context, parents, leftovers);
  const restarted = new Set(leftovers.map((child) => child.id));
  return new Set(candidates.filter((change) => restarted.has(change.childWorkflowId)));
}
