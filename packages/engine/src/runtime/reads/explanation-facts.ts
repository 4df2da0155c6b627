import {
  type Explanation,
  type ExplanationNote,
  explain,
  type QueuePause,
  queuePausedNote,
  type RateFacts,
  type RateLimit,
  rateLimitedNote,
  type StaleResult,
  staleAttemptNotes,
  type TaskPriorityPlace,
  type Transition,
} from '@causeway/workflow/internal';
import { type RateSpend, rateSpendKey, rateWindowList } from '../../db/blockers/rate-windows';
import { databaseNow } from '../../db/clock';
import type { Db } from '../../db/database';
import { queuePauseList } from '../../db/queues/queue-pauses';
import { childCountList, type StepChildCounts } from '../../db/reads/child-counts';
import { priorityPlacesByWorkflows } from '../../db/reads/priority-places';
import type { TaskRecord } from '../../db/rows';

/** What a workflow's explanation says beside its log, read only where its tasks need it. */
export interface ExplanationFacts {
  /** Steps that started children (R48), when a step may wait for them. */
  readonly childCounts: readonly StepChildCounts[];
  /** What its queued tasks with a priority jump (R49). */
  readonly priorities: readonly TaskPriorityPlace[];
  /** Paused queues (R53), when it has a queued task. */
  readonly pauses: ReadonlyMap<string, QueuePause>;
  /** Rate windows of its queued tasks' keys (R51) at database time `now`. */
  readonly windows: ReadonlyMap<string, RateFacts>;
  readonly now: Date | null;
}

const noFacts: ExplanationFacts = {
  childCounts: [],
  priorities: [],
  pauses: new Map(),
  windows: new Map(),
  now: null,
};

/**
 * The facts of each workflow's explanation from its tasks (`tasksByWorkflow`): one statement
 * per kind of fact that some task needs, for any number of workflows, and none for workflows
 * that are done. `rateLimits` are the engine's declared limits.
 */
export async function readExplanationFacts(
  db: Db,
  tasksByWorkflow: ReadonlyMap<string, readonly TaskRecord[]>,
  rateLimits: readonly RateLimit[],
): Promise<Map<string, ExplanationFacts>> {
  const tasks = [...tasksByWorkflow.values()].flat();
  const queued = tasks.filter((task) => task.state === 'queued');
  const idsWhere = (test: (task: TaskRecord) => boolean) => [
    ...new Set(tasks.filter(test).map((task) => task.workflowId)),
  ];
  // Only a step that waits for children, or is cancelling them, gets a line of their counts.
  const parents = idsWhere(
    (task) => task.state === 'awaiting_children' || task.state === 'cancel_requested',
  );
  const prioritised = idsWhere((task) => task.state === 'queued' && task.priority !== 0);
  const spends = queued.flatMap((task) => (task.rate == null ? [] : [spendOf(task.rate)]));
  const childCounts = parents.length === 0 ? [] : await childCountList(db, parents);
  const priorities =
    prioritised.length === 0 ? new Map() : await priorityPlacesByWorkflows(db, prioritised);
  const pauses = queued.length === 0 ? new Map() : await queuePauseList(db);
  const now = spends.length === 0 ? null : await databaseNow(db);
  const windows = now === null ? new Map() : await rateWindowList(db, spends, rateLimits, now);
  const facts = new Map<string, ExplanationFacts>();
  for (const id of tasksByWorkflow.keys()) {
    facts.set(id, {
      childCounts: childCounts.filter((counts) => counts.workflowId === id),
      priorities: priorities.get(id) ?? [],
      pauses,
      windows,
      now,
    });
  }
  return facts;
}

/**
 * The workflow's history as a narrative (R27), with the cancels that came too late (R14), what
 * its queued tasks with a priority jump (R49), the paused queues that hold them (R53), and
 * what holds a due task whose rate limit's key is spent or paused (R51), and the attempts whose
 * result came after their lease was lost (R56, from the refused results `stale`).
 */
export function explainWithFacts(
  transitions: readonly Transition[],
  tasks: readonly TaskRecord[],
  facts: ExplanationFacts = noFacts,
  stale: readonly StaleResult[] = [],
): Explanation {
  const notes: ExplanationNote[] = tasks.flatMap((task) =>
    task.cancelAskedAt === null
      ? []
      : [
          {
            at: task.cancelAskedAt,
            step: task.step,
            text: `cancel asked by ${task.cancelAskedBy ?? 'client'} after the submission was accepted: the cancel came too late`,
          },
        ],
  );
  const paused = tasks.flatMap((task) => {
    const pause = task.state === 'queued' ? facts.pauses.get(task.queue) : undefined;
    return pause === undefined ? [] : [queuePausedNote(task.step, task.queue, pause)];
  });
  const { now } = facts;
  const rateHeld = tasks.flatMap((task) => {
    if (task.state !== 'queued' || task.rate == null || now === null) return [];
    const window = facts.windows.get(rateSpendKey(spendOf(task.rate)));
    const due = task.runAt === null || task.runAt.getTime() <= now.getTime();
    const note = window === undefined || !due ? null : rateLimitedNote(task.step, window, now);
    return note === null ? [] : [note];
  });
  const rates = tasks.flatMap((task) =>
    task.rate == null ? [] : [{ step: task.step, name: task.rate.name, key: task.rate.key }],
  );
  return explain(
    transitions,
    [...notes, ...paused, ...rateHeld, ...staleAttemptNotes(transitions, stale)],
    facts.childCounts,
    facts.priorities,
    rates,
  );
}

/** A task's rate spend as the windows' read takes it (key '' for the name's one bucket). */
function spendOf(rate: NonNullable<TaskRecord['rate']>): RateSpend {
  return { name: rate.name, key: rate.key ?? '', cost: rate.cost };
}
