import {
  definitionAt,
  type Explanation,
  type RateLimit,
  receiptAwaitingState,
  type TaskAttempt,
  type Transition,
  taskAttempts,
  type WorkflowDefinition,
} from '@causeway/workflow/internal';
import type { Kysely } from 'kysely';
import { staleResultListByWorkflows } from '../../db/attempts/stale-result-list';
import { outboxListByTasks } from '../../db/outbox/outbox-queries';
import { inOneSnapshot } from '../../db/read-snapshot';
import { childCountList, type StepChildCounts } from '../../db/reads/child-counts';
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
import { explainWithFacts, readExplanationFacts } from './explanation-facts';
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
  /** Each claim of the task, oldest first (R56): how it ended, or `running`. */
  readonly attempts: readonly TaskAttempt[];
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
    const stale = await staleResultListByWorkflows(tx, [workflowId]);
    const outbox = await outboxListByTasks(
      tx,
      tasks.map((task) => task.id),
    );
    const childCounts = await childCountList(tx, [workflowId]);
    const parent = await parentView(tx, workflow.parent);
    return { workflow, tasks, transitions, stale, outbox, childCounts, parent };
  });
  if (read === undefined) return undefined;
  const { workflow, tasks, transitions, stale, outbox, childCounts, parent } = read;
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
          attempts: taskAttempts(task.id, transitions, stale),
          outbox: messages,
          sending:
            task.state === receiptAwaitingState &&
            messages.some((message) => message.state === 'pending'),
        };
      }),
    transitions,
  };
}

/** The workflow's history as a narrative (R27) with its notes (`explainWithFacts`), in one snapshot. */
export async function explainWorkflow(
  db: Kysely<CausewayDatabase>,
  workflowId: string,
  rateLimits: readonly RateLimit[] = [],
): Promise<Explanation> {
  assertUuid(workflowId, 'workflow');
  const read = await inOneSnapshot(db, async (tx) => {
    if ((await workflowGet(tx, workflowId)) === undefined) return undefined;
    const transitions = await transitionListByWorkflow(tx, workflowId);
    const stale = await staleResultListByWorkflows(tx, [workflowId]);
    const tasks = await taskListByWorkflows(tx, [workflowId]);
    const facts = await readExplanationFacts(tx, new Map([[workflowId, tasks]]), rateLimits);
    return { transitions, tasks, stale, facts: facts.get(workflowId) };
  });
  if (read === undefined) {
    throw new EngineError('not_found', `no workflow has the id ${workflowId}`, { workflowId });
  }
  return explainWithFacts(read.transitions, read.tasks, read.facts, read.stale);
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
