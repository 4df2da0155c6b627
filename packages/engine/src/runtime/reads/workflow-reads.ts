import {
  definitionAt,
  type Explanation,
  explain,
  queuePausedNote,
  type RateLimit,
  rateLimitedNote,
  receiptAwaitingState,
  type Transition,
  type WorkflowDefinition,
} from '@causeway/workflow/internal';
import type { Kysely } from 'kysely';
import { rateSpendKey, rateWindowList } from '../../db/blockers/rate-windows';
import { databaseNow } from '../../db/clock';
import { outboxListByTasks } from '../../db/outbox/outbox-queries';
import { queuePauseList } from '../../db/queues/queue-pauses';
import { inOneSnapshot } from '../../db/read-snapshot';
import { childCountList, type StepChildCounts } from '../../db/reads/child-counts';
import { priorityPlaceList } from '../../db/reads/priority-places';
import {
  taskGet,
  taskListByWorkflows,
  transitionListByWorkflow,
  workflowGet,
} from '../../db/reads/record-reads';
import type { ParentLink, TaskRecord, WorkflowRecord } from '../../db/rows';
import type { CausewayDatabase } from '../../db/schema';
import { EngineError } from '../../errors';
import { assertUuid } from '../operations/operations';
import { workflowResult } from './tree-reads';

export {
  type ChildrenRequest,
  type ChildWorkflowPage,
  readChildren,
} from './tree-reads';

/** An outbox message of a task (R22): while `pending`, the task is "submitted, sending". */
export interface OutboxView {
  readonly id: string;
  readonly channel: string;
  readonly state: string;
  readonly attempts: number;
  readonly lastError: string | null;
}

export interface TaskView extends TaskRecord {
  readonly transitions: readonly Transition[];
  readonly outbox: readonly OutboxView[];
  /** Submitted and still being delivered: never shown as failed (R22). */
  readonly sending: boolean;
}

/** A child workflow's parent (R48): the link, with the parent's name and the step's. */
export interface ParentView extends ParentLink {
  /** The parent workflow's name. */
  readonly name: string;
  /** The step that started it. */
  readonly step: string;
}

export interface WorkflowView extends WorkflowRecord {
  readonly parent: ParentView | null;
  readonly tasks: readonly TaskView[];
  /** Workflow-level and task-level rows, in log order. */
  readonly transitions: readonly Transition[];
  /**
   * Its result once it succeeded (R45): its sink step's output, or an object of its sink steps'
   * outputs; null otherwise, or when this process does not define it.
   */
  readonly result: unknown;
  /** Each step that started child workflows, with their counts by state (R48). */
  readonly childCounts: readonly StepChildCounts[];
}

/** The workflow with its tasks, each with its transitions and outbox; undefined if unknown. */
export async function readWorkflowView(
  db: Kysely<CausewayDatabase>,
  definitions: ReadonlyMap<string, WorkflowDefinition>,
  workflowId: string,
): Promise<WorkflowView | undefined> {
  assertUuid(workflowId, 'workflow');
  // One snapshot: the states shown are the ones the history shown ends in (R25).
  const read = await inOneSnapshot(db, async (tx) => {
    const workflow = await workflowGet(tx, workflowId);
    if (workflow === undefined) return undefined;
    const tasks = await taskListByWorkflows(tx, [workflowId]);
    const transitions = await transitionListByWorkflow(tx, workflowId);
    const outbox = await outboxListByTasks(
      tx,
      tasks.map((task) => task.id),
    );
    const childCounts = await childCountList(tx, [workflowId]);
    const parent = await parentView(tx, workflow.parent);
    return { workflow, tasks, transitions, outbox, childCounts, parent };
  });
  if (read === undefined) return undefined;
  const { workflow, tasks, transitions, outbox, childCounts, parent } = read;
  const order = new Map(
    definitionAt(definitions, workflow.name, workflow.version)?.steps.map((step, index) => [
      step.name,
      index,
    ]),
  );
  return {
    ...workflow,
    parent,
    result: workflowResult(workflow, tasks, definitions),
    childCounts,
    tasks: tasks
      .sort((a, b) => (order.get(a.step) ?? 0) - (order.get(b.step) ?? 0))
      .map((task) => {
        const messages = outbox
          .filter((message) => message.taskId === task.id)
          .map(({ taskId: _taskId, ...message }) => message);
        return {
          ...task,
          transitions: transitions.filter((row) => row.taskId === task.id),
          outbox: messages,
          sending:
            task.state === receiptAwaitingState &&
            messages.some((message) => message.state === 'pending'),
        };
      }),
    transitions,
  };
}

/**
 * The workflow's history as a narrative (R27), with the cancels that came too late (R14),
 * what its queued tasks with a priority jump (R49), and what holds a due task whose rate
 * limit's key is spent or paused (R51, with the engine's `rateLimits`).
 */
export async function explainWorkflow(
  db: Kysely<CausewayDatabase>,
  workflowId: string,
  rateLimits: readonly RateLimit[] = [],
): Promise<Explanation> {
  assertUuid(workflowId, 'workflow');
  const read = await inOneSnapshot(db, async (tx) => {
    if ((await workflowGet(tx, workflowId)) === undefined) return undefined;
    const transitions = await transitionListByWorkflow(tx, workflowId);
    const tasks = await taskListByWorkflows(tx, [workflowId]);
    const childCounts = await childCountList(tx, [workflowId]);
    const priorities = await priorityPlaceList(tx, workflowId);
    const pauses = tasks.some((task) => task.state === 'queued') ? await queuePauseList(tx) : null;
    const rated = tasks.flatMap((task) =>
      task.state === 'queued' && task.rate != null ? [spendOf(task.rate)] : [],
    );
    const now = rated.length === 0 ? null : await databaseNow(tx);
    const windows = now === null ? null : await rateWindowList(tx, rated, rateLimits, now);
    return { transitions, tasks, childCounts, priorities, pauses, now, windows };
  });
  if (read === undefined) {
    throw new EngineError('not_found', `no workflow has the id ${workflowId}`, { workflowId });
  }
  const { transitions, tasks, childCounts, priorities, pauses, now, windows } = read;
  // A queued step of a paused queue (R53): who paused it and why.
  const paused = tasks.flatMap((task) => {
    const pause = task.state === 'queued' ? pauses?.get(task.queue) : undefined;
    return pause === undefined ? [] : [queuePausedNote(task.step, task.queue, pause)];
  });
  const notes = tasks.flatMap((task) =>
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
  // A due queued step whose rate limit's key is spent or paused (R51): what holds it.
  const rateHeld = tasks.flatMap((task) => {
    const facts =
      task.state === 'queued' && task.rate != null && now !== null
        ? windows?.get(rateSpendKey(spendOf(task.rate)))
        : undefined;
    const due = task.runAt === null || (now !== null && task.runAt.getTime() <= now.getTime());
    const note =
      facts === undefined || now === null || !due ? null : rateLimitedNote(task.step, facts, now);
    return note === null ? [] : [note];
  });
  const rates = tasks.flatMap((task) =>
    task.rate == null ? [] : [{ step: task.step, name: task.rate.name, key: task.rate.key }],
  );
  return explain(transitions, [...notes, ...paused, ...rateHeld], childCounts, priorities, rates);
}

/** A task's rate spend as the windows' read takes it (key '' for the name's one bucket). */
function spendOf(rate: {
  readonly name: string;
  readonly key: string | null;
  readonly cost: number;
}) {
  return { name: rate.name, key: rate.key ?? '', cost: rate.cost };
}

/** The parent's name and the step that started the child; null for a root. */
async function parentView(
  tx: Parameters<typeof workflowGet>[0],
  link: ParentLink | null,
): Promise<ParentView | null> {
  if (link === null) return null;
  const [workflow, task] = [await workflowGet(tx, link.workflowId), await taskGet(tx, link.taskId)];
  return { ...link, name: workflow?.name ?? '', step: task?.step ?? '' };
}
