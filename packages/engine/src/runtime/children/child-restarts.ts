import type { Transaction } from 'kysely';
import { childrenReplacedWrite } from '../../db/children/children-of-steps';
import type { LoadedRuns } from '../../db/locked-runs';
import type { CausewayDatabase } from '../../db/schema';
import { workflowLockWithTasks } from '../../db/settle/workflow-lock';
import type { ApplyContext } from '../decision/event-request';
import { admitChildren, type ChildStart } from './child-admission';

/** A cancelled child to start again in its place: which workflow, under which step, where. */
export interface ChildToRestart {
  readonly id: string;
  readonly name: string;
  readonly parentTaskId: string;
  readonly index: number;
}

/**
 * Children that their step's failure cancelled, started again in their places (R47): each
 * old child marked `replaced` (no longer counted), and a new workflow written at its index
 * with its input and detail `replaces: <old id>`, keyed by the step's current replay round.
 * `parents` are the steps' workflows, locked by the caller. The step's tally is not touched:
 * the caller counts it (a replay anew; a straggler's end leaves it as it was, one open child
 * for another).
 */
export async function childrenRestart(
  tx: Transaction<CausewayDatabase>,
  context: ApplyContext,
  parents: LoadedRuns,
  children: readonly ChildToRestart[],
): Promise<void> {
  if (children.length === 0) return;
  const old = await workflowLockWithTasks(
    tx,
    children.map((child) => child.id),
    { skipLocked: false },
  );
  const inputOf = new Map(old.workflows.map((workflow) => [workflow.id, workflow.input]));
  const versionOf = new Map(old.workflows.map((workflow) => [workflow.id, workflow.version]));
  const attributesOf = new Map(old.workflows.map((workflow) => [workflow.id, workflow.attributes]));
  const starts: ChildStart[] = [];
  const replaced: string[] = [];
  for (const task of parents.tasks) {
    const mine = children
      .filter((child) => child.parentTaskId === task.id)
      .sort((a, b) => a.index - b.index);
    const workflow = parents.workflows.find((candidate) => candidate.id === task.workflowId);
    if (mine.length === 0 || workflow === undefined) continue;
    // A child starts again under the version it recorded, if this engine defines it (R54),
    // and then with the attributes it had (R55: those its start call gave included). Under
    // another version (or none recorded), whose definition may label the same input otherwise,
    // with its parent's and that definition's.
    const groups = new Map<string, typeof mine>();
    for (const child of mine) {
      const attributes = JSON.stringify(attributesOf.get(child.id) ?? {});
      const key = `${child.name}\n${versionOf.get(child.id) ?? ''}\n${attributes}`;
      groups.set(key, [...(groups.get(key) ?? []), child]);
    }
    for (const group of groups.values()) {
      const { id, name } = group[0] as (typeof mine)[number];
      const version = versionOf.get(id) ?? null;
      const recorded = version === null ? undefined : context.definitions.at(name, version);
      const admitted = admitChildren(
        context.definitions,
        {
          workflow: context.definitions.at(name, version) ?? name,
          ...(recorded === undefined
            ? {}
            : {
                attributes: attributesOf.get(id) ?? null,
                attributesLabel: 'the attributes of the child it replaces',
              }),
          inputs: group.map((child) => inputOf.get(child.id)),
          tolerate: null,
          single: false,
          detached: false,
          maxChildren: group.length,
          indexes: group.map((child) => child.index),
          details: group.map((child) => ({ replaces: child.id })),
        },
        { workflow, task },
        parents.now,
      );
      if (!admitted.ok)
        throw new Error(`a cancelled child cannot start again: ${admitted.summary}`);
      starts.push({ ...admitted.start, restart: true });
      replaced.push(...group.map((child) => child.id));
    }
  }
  await childrenReplacedWrite(tx, replaced);
  if (context.writeChildren === undefined) {
    throw new Error('this engine context cannot write child workflows');
  }
  await context.writeChildren(tx, starts);
}
