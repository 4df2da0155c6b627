import type { Actor } from '@causeway/workflow/internal';
import type { Transaction } from 'kysely';
import type { CausewayDatabase } from '../../db/schema';
import {
  debounceLockKey,
  debounceMark,
  debounceQueuedLock,
} from '../../db/submission/debounce-queries';
import { decideAndWrite } from '../decision/apply-events';
import type { ApplyContext } from '../decision/event-request';
import type { DebouncedWorkflow } from './submission-plan';

/** The debounce of one new workflow: what it superseded, and when it is due. */
export interface DebounceOutcome {
  readonly superseded: readonly string[];
  readonly dueAt: Date;
}

/**
 * Takes the key locks of a submit's debounced workflows before its insert, in one order, so
 * that two submits with keys in common never wait for each other in a circle.
 */
export async function debounceLockKeys(
  tx: Transaction<CausewayDatabase>,
  debounced: readonly DebouncedWorkflow[],
): Promise<void> {
  const keys = new Map(debounced.map((item) => [`${item.name}\u0000${item.key}`, item]));
  for (const id of [...keys.keys()].sort()) {
    const item = keys.get(id) as DebouncedWorkflow;
    await debounceLockKey(tx, item.name, item.key);
  }
}

/**
 * Supersedes, in the submit's transaction and under the key's lock, every queued workflow of
 * the key whose tasks were never leased (a lease epoch of 0: claims raise it and nothing lowers
 * it, so a task handed back at shutdown or snoozed still counts as started). Their tasks end
 * `cancelled` (`superseded`, naming the new workflow), and the new one carries the burst's start
 * on. A workflow that started before this took its lock is left alone, and the new one starts
 * a burst of its own: it is due `quietMs` from now.
 */
export async function debounceSupersede(
  tx: Transaction<CausewayDatabase>,
  context: ApplyContext,
  item: DebouncedWorkflow,
): Promise<DebounceOutcome> {
  const { runs, burstStartedAt } = await debounceQueuedLock(
    tx,
    item.name,
    item.key,
    item.workflowId,
  );
  const unstarted = new Set(
    runs.workflows
      .map((workflow) => workflow.id)
      .filter((id) =>
        runs.tasks
          .filter((task) => task.workflowId === id)
          .every(
            (task) =>
              (task.state === 'queued' || task.state === 'pending') && task.leaseEpoch === 0,
          ),
      ),
  );
  const superseded = [...unstarted].sort();
  const starts = superseded
    .map((id) => burstStartedAt.get(id))
    .filter((start): start is Date => start !== undefined)
    .map((start) => start.getTime());
  if (superseded.length > 0) {
    const actor: Actor = { kind: 'client' };
    // Pending tasks first: superseded before their upstream steps, they are not cancelled
    // by the cascade of an upstream step's cancel (`cancelled_before_start`) but superseded.
    const tasks = runs.tasks
      .filter((task) => unstarted.has(task.workflowId))
      .sort((a, b) => Number(a.state !== 'pending') - Number(b.state !== 'pending'));
    const result = await decideAndWrite(
      tx,
      context,
      {
        workflows: runs.workflows.filter((workflow) => unstarted.has(workflow.id)),
        tasks,
        now: runs.now,
      },
      tasks.map((task) => ({
        taskId: task.id,
        workflowId: task.workflowId,
        event: { type: 'supersede', actor, by: item.workflowId },
      })),
      {},
    );
    const refused = result.outcomes.filter((outcome) => outcome.kind !== 'applied');
    if (refused.length > 0) {
      // The tasks were checked under their locks: a refusal here is a bug, and rolls back.
      throw new Error(
        `superseding ${superseded.join(', ')} was refused: ${JSON.stringify(refused[0])}`,
      );
    }
  }
  const dueAt = await debounceMark(tx, {
    workflowId: item.workflowId,
    key: item.key,
    quietMs: item.quietMs,
    maxWaitMs: item.maxWaitMs,
    burstStartedAt: starts.length === 0 ? null : new Date(Math.min(...starts)),
  });
  return { superseded, dueAt };
}
