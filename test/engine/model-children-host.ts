/**
 * What the children part of the engine model (model-children.ts) asks of the rest of it: the
 * runs the model keeps and its decisions, behind a small interface, so the two files do not
 * import each other; and where the ids of the children the engine started come from.
 */
import type {
  Actor,
  RunClock,
  RunTask,
  TaskEvent,
  TaskState,
  WorkflowDefinition,
  WorkflowRun,
  WorkflowState,
} from '@causeway/workflow/internal';
import type { EngineColumns, LogRow } from './model-rows';
import { modelKid } from './model-workflows';

/** What a step's `startChildren` asked for (R43, R45). */
export interface ChildRequest {
  readonly inputs: readonly unknown[];
  /** `tolerate.failures`, or null: fail fast. */
  readonly tolerate: number | null;
}

/** The ids the engine gave a child it started: its workflow's, its tasks' in step order. */
export interface ChildIds {
  readonly workflowId: string;
  readonly taskIds: readonly string[];
}

/** Where the model finds the ids of the children a transaction started. */
export interface ChildIdSource {
  take(parentTaskId: string, index: number): ChildIds;
}

/** What the engine model lends this file: its decisions and what it knows of each run. */
export interface ChildHost {
  readonly kidDefinition: WorkflowDefinition;
  workflowState(workflowId: string): WorkflowState;
  tasksOf(workflowId: string): readonly { readonly taskId: string; readonly state: TaskState }[];
  taskOf(taskId: string): {
    readonly workflowId: string;
    readonly step: string;
    readonly state: TaskState;
    readonly deadlineAt: Date | null;
    readonly replayCount: number;
  };
  /** A workflow's result (R45): the output of its only sink step. */
  resultOf(workflowId: string): unknown;
  /** The reason of the workflow's latest row of its own (how it ended). */
  workflowReason(workflowId: string): string;
  /** The actor of the latest row that asked one of the workflow's tasks to cancel, if any. */
  cancelAskedBy(workflowId: string): string | undefined;
  inputOf(workflowId: string): unknown;
  apply(
    taskId: string,
    event: TaskEvent,
    clock: RunClock,
    cause?: { readonly output?: unknown },
  ): { readonly kind: 'applied' | 'refused'; readonly rows?: readonly LogRow[] };
  cancelWorkflow(workflowId: string, actor: Actor, clock: RunClock, reason?: string): LogRow[];
  submitChild(child: ChildSubmission): LogRow[];
}

/** A child workflow as its step submits it (R43): its key, its creation rows' actor and detail. */
export interface ChildSubmission {
  readonly ids: ChildIds;
  readonly now: Date;
  readonly input: unknown;
  readonly key: string;
  readonly actor: string;
  readonly detail: Readonly<Record<string, unknown>>;
  /** R46: the step's deadline, the child's at the latest. */
  readonly deadlineCapAt: Date | null;
}

/** The parts of the engine model the host is made of (model-state.ts's EngineModel). */
export interface HostModel {
  workflow(workflowId: string): {
    readonly definition: WorkflowDefinition;
    readonly input: unknown;
    readonly run: WorkflowRun;
    readonly parent: WorkflowState;
    readonly columns: ReadonlyMap<string, EngineColumns>;
    readonly log: readonly LogRow[];
  };
  task(taskId: string): { readonly workflow: { readonly id: string }; readonly task: RunTask };
  apply: ChildHost['apply'];
  cancelWorkflow: ChildHost['cancelWorkflow'];
  submit(
    definition: WorkflowDefinition,
    idempotencyKey: string | null,
    ids: ChildIds,
    now: Date,
    input: unknown,
    options: {
      readonly origin: {
        readonly actor: string;
        readonly detail: Readonly<Record<string, unknown>>;
      };
      readonly deadlineCapAt: Date | null;
    },
  ): LogRow[];
}

/** The host the engine model lends its children: what it knows of runs, read its own way. */
export function childHostOf(model: HostModel): ChildHost {
  return {
    kidDefinition: modelKid,
    workflowState: (workflowId) => model.workflow(workflowId).parent,
    tasksOf: (workflowId) =>
      model.workflow(workflowId).run.tasks.map((task) => ({
        taskId: task.taskId,
        state: task.snapshot.state,
      })),
    taskOf: (taskId) => {
      const { workflow, task } = model.task(taskId);
      const { state, deadlineAt, replayCount } = task.snapshot;
      return { workflowId: workflow.id, step: task.step, state, deadlineAt, replayCount };
    },
    // R45: a workflow's result is the output of its only sink step (the model's have one).
    resultOf: (workflowId) => {
      const { definition, run, columns } = model.workflow(workflowId);
      const sinks = definition.steps.filter(
        (step) => !definition.steps.some((other) => other.after.includes(step.name)),
      );
      const sink = run.tasks.find((task) => task.step === sinks[0]?.name);
      return sink === undefined ? null : (columns.get(sink.taskId)?.output ?? null);
    },
    workflowReason: (workflowId) =>
      model
        .workflow(workflowId)
        .log.filter((row) => row.task_id === null)
        .at(-1)?.reason ?? 'submitted',
    // R45, R46: a cancel is asked by these edges, whoever asks (a client, an operator, a step).
    cancelAskedBy: (workflowId) =>
      model
        .workflow(workflowId)
        .log.filter(
          (row) =>
            row.task_id !== null &&
            ['cancel_requested', 'cancelled_before_start', 'cancelled_while_waiting'].includes(
              row.reason,
            ),
        )
        .at(-1)?.actor,
    inputOf: (workflowId) => model.workflow(workflowId).input,
    apply: (taskId, event, clock, cause) => model.apply(taskId, event, clock, cause),
    cancelWorkflow: (workflowId, actor, clock, reason) =>
      model.cancelWorkflow(workflowId, actor, clock, reason),
    // R43: by the step, under the step's deadline.
    submitChild: (child) =>
      model.submit(modelKid, child.key, child.ids, child.now, child.input, {
        origin: { actor: child.actor, detail: child.detail },
        deadlineCapAt: child.deadlineCapAt,
      }),
  };
}
