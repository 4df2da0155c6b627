import type { Transaction } from 'kysely';
import { childTallyWrite } from '../../db/children/child-tally-write';
import { childrenOfSteps, childTallyCount } from '../../db/children/children-of-steps';
import type { CausewayDatabase } from '../../db/schema';
import { workflowLockWithTasks } from '../../db/settle/workflow-lock';
import { EngineError } from '../../errors';
import type { ChildReplay, ChildWork, DecideOnce } from '../decision/child-effects';
import type { ApplyContext, EventRequest } from '../decision/event-request';
import { childrenRestart } from './child-restarts';

/**
 * A replayed step that had children awaits them again (R47): its dead children are replayed
 * (each dead task, by the same operator and reason), the children its failure cancelled start
 * again as new workflows in their places (detail `replaces: <old id>`), the succeeded ones are
 * kept with their results, and its tally is counted anew.
 */
export async function childReplaysApply(
  tx: Transaction<CausewayDatabase>,
  context: ApplyContext,
  replays: readonly ChildReplay[],
  decide: DecideOnce,
): Promise<ChildWork> {
  const replayOf = new Map(replays.map((replay) => [replay.parentTaskId, replay]));
  const children = await childrenOfSteps(tx, [...replayOf.keys()], { unfinished: false });
  const dead = children.filter((child) => child.state === 'dead');
  const cancelled = children.filter((child) => child.state === 'cancelled');
  const loaded = await workflowLockWithTasks(
    tx,
    [...dead, ...cancelled].map((child) => child.id),
    { skipLocked: false },
  );
  const deadIds = new Set(dead.map((child) => child.id));
  const parentOf = new Map(children.map((child) => [child.id, child.parentTaskId]));
  const requests: EventRequest[] = loaded.tasks
    .filter((task) => deadIds.has(task.workflowId) && task.state === 'dead')
    .map((task) => {
      const replay = replayOf.get(parentOf.get(task.workflowId) as string) as ChildReplay;
      return {
        taskId: task.id,
        workflowId: task.workflowId,
        event: {
          type: 'replay',
          actor: replay.actor,
          reason: replay.reason.trim() === '' ? 'its parent step was replayed' : replay.reason,
          bulk: replay.bulk,
        },
      };
    });
  const work = requests.length === 0 ? null : await decide(loaded, requests, {});
  const parents = await workflowLockWithTasks(
    tx,
    [...new Set(replays.map((replay) => replay.parentWorkflowId))],
    { skipLocked: false },
  );
  // The children the failure cancelled start again in their places; a straggler that ends
  // cancelled only after this replay starts again in its own transaction (leftover-cancels.ts).
  await childrenRestart(tx, context, parents, cancelled);
  // The tallies are counted anew below: the replayed children's own changes are in them.
  const tallies = await childTallyCount(tx, [...replayOf.keys()]);
  await childTallyWrite(
    tx,
    parents.tasks.flatMap((task) => {
      const counted = tallies.get(task.id) ?? { total: 0, succeeded: 0, failed: 0 };
      if (!replayOf.has(task.id) || task.children === null) return [];
      if (counted.total < task.children.total) {
        // Retention removed children of a parent that could no longer move (R59).
        throw new EngineError(
          'conflict',
          `step ${task.step} of workflow ${task.workflowId} started ${task.children.total} child workflows and only ${counted.total} are kept: retention removed the others, so it cannot await them again`,
        );
      }
      return [{ taskId: task.id, ...task.children, ...counted }];
    }),
  );
  if (work === null) return { starts: [], cancels: [], replays: [], changes: [] };
  return {
    ...work,
    changes: work.changes.filter((change) => !replayOf.has(change.parentTaskId)),
  };
}
