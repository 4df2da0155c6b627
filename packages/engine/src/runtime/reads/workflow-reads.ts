import {
  type Explanation,
  explain,
  receiptAwaitingState,
  type Transition,
  type WorkflowDefinition,
} from '@causeway/workflow/internal';
import type { Kysely } from 'kysely';
import { outboxListByTasks } from '../../db/outbox/outbox-queries';
import { inOneSnapshot } from '../../db/read-snapshot';
import {
  taskListByWorkflows,
  transitionListByWorkflow,
  workflowGet,
} from '../../db/reads/record-reads';
import type { TaskRecord, WorkflowRecord } from '../../db/rows';
import type { CausewayDatabase } from '../../db/schema';
import { EngineError } from '../../errors';
import { assertUuid } from '../operations/operations';

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

export interface WorkflowView extends WorkflowRecord {
  readonly tasks: readonly TaskView[];
  /** Workflow-level and task-level rows, in log order. */
  readonly transitions: readonly Transition[];
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
    return { workflow, tasks, transitions, outbox };
  });
  if (read === undefined) return undefined;
  const { workflow, tasks, transitions, outbox } = read;
  const order = new Map(
    definitions.get(workflow.name)?.steps.map((step, index) => [step.name, index]),
  );
  return {
    ...workflow,
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

/** The workflow's history as a narrative (R27), with the cancels that came too late (R14). */
export async function explainWorkflow(
  db: Kysely<CausewayDatabase>,
  workflowId: string,
): Promise<Explanation> {
  assertUuid(workflowId, 'workflow');
  const read = await inOneSnapshot(db, async (tx) => {
    if ((await workflowGet(tx, workflowId)) === undefined) return undefined;
    const transitions = await transitionListByWorkflow(tx, workflowId);
    const tasks = await taskListByWorkflows(tx, [workflowId]);
    return { transitions, tasks };
  });
  if (read === undefined) {
    throw new EngineError('not_found', `no workflow has the id ${workflowId}`, { workflowId });
  }
  const { transitions, tasks } = read;
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
  return explain(transitions, notes);
}
