/**
 * The model side of the engine model test: the PURE machine of @causeway/workflow
 * (`createWorkflowRun`, `applyTaskEvent`, `cancelWorkflowRun`) applied to in-memory runs, plus
 * the few columns the pure machine does not know about and the engine keeps next to it
 * (lease holder/epoch/expiry of R7, the receipt being waited for, checkpoint names, the reason
 * of the last edge). Those are written here from the rules (R7, R9, R10, R19, R23), not copied
 * from the engine.
 */
import {
  type Actor,
  applyTaskEvent,
  cancelWorkflowRun,
  createWorkflowRun,
  type PlannedTransition,
  type ReasonCode,
  type Refusal,
  type RunClock,
  type RunTask,
  type TaskEvent,
  type TaskSnapshot,
  type TaskState,
  type WorkflowDefinition,
  type WorkflowRun,
  type WorkflowStep,
} from '@causeway/workflow';
import { leaseMs } from './model-workflows';

/** One row of the transition log as the test compares it: everything but its id and time. */
export interface LogRow {
  readonly workflowId: string;
  readonly taskId: string | null;
  readonly step: string | null;
  readonly from: string | null;
  readonly to: string;
  readonly reason: string;
  readonly errorCategory: string | null;
  readonly errorSummary: string | null;
  readonly actor: string;
  readonly attempt: number;
  readonly detail: unknown;
}

/** Engine columns beside the machine's snapshot. */
export interface EngineColumns {
  holder: string | null;
  epoch: number;
  leaseExpiresAt: Date | null;
  receiptId: string | null;
  receiptDeadlineAt: Date | null;
  /** Reason of the task's last edge (what bulk requeue selects on). */
  lastReason: ReasonCode;
  /** Checkpoint names ever written (R19: never cleared, a retry resumes from them). */
  readonly checkpoints: Set<string>;
  /** The step's output, stored with its completion (kept once written). */
  output: unknown;
}

export interface ModelWorkflow {
  readonly id: string;
  readonly definition: WorkflowDefinition;
  readonly idempotencyKey: string | null;
  run: WorkflowRun;
  readonly columns: Map<string, EngineColumns>;
}

/** A task with everything the model knows about it. */
export interface ModelTask {
  readonly workflow: ModelWorkflow;
  readonly task: RunTask;
  readonly step: WorkflowStep;
  readonly columns: EngineColumns;
}

/** What caused an event, for the engine columns the edge writes. */
export interface EventCause {
  /** The claiming worker's holder. */
  readonly holder?: string;
  /** The receipt an `await_receipt` waits for. */
  readonly receipt?: { readonly id: string; readonly timeoutMs: number };
  /** The output a `complete` reports. */
  readonly output?: unknown;
}

/** An event's result; `reason` is the task's latest edge reason afterwards (why it is in `state`). */
export type ModelOutcome =
  | {
      readonly kind: 'applied';
      readonly rows: readonly LogRow[];
      readonly state: TaskState;
      readonly reason: ReasonCode;
    }
  | {
      readonly kind: 'refused';
      readonly refusal: Refusal;
      readonly state: TaskState;
      readonly reason: ReasonCode;
    };

export const leaseHoldingStates: readonly TaskState[] = ['leased', 'cancel_requested'];

export class EngineModel {
  readonly workflows: ModelWorkflow[] = [];

  /** Every task of the run, workflows in submit order, steps in definition order. */
  tasks(): ModelTask[] {
    return this.workflows.flatMap((workflow) =>
      workflow.run.tasks.map((task) => ({
        workflow,
        task,
        step: stepOf(workflow.definition, task.step),
        columns: workflow.columns.get(task.taskId) as EngineColumns,
      })),
    );
  }

  task(taskId: string): ModelTask {
    const found = this.tasks().find((candidate) => candidate.task.taskId === taskId);
    if (found === undefined) throw new Error(`the model has no task ${taskId}`);
    return found;
  }

  hasTask(taskId: string): boolean {
    return this.tasks().some((candidate) => candidate.task.taskId === taskId);
  }

  workflow(workflowId: string): ModelWorkflow {
    const found = this.workflows.find((candidate) => candidate.id === workflowId);
    if (found === undefined) throw new Error(`the model has no workflow ${workflowId}`);
    return found;
  }

  byKey(name: string, idempotencyKey: string): ModelWorkflow | undefined {
    return this.workflows.find(
      (workflow) => workflow.definition.name === name && workflow.idempotencyKey === idempotencyKey,
    );
  }

  /** A new workflow (R2, R3): its creation rows, workflow row first. */
  submit(
    definition: WorkflowDefinition,
    idempotencyKey: string | null,
    ids: { readonly workflowId: string; readonly taskIds: readonly string[] },
    now: Date,
  ): LogRow[] {
    const created = createWorkflowRun(definition, ids, now);
    const columns = new Map<string, EngineColumns>();
    for (const task of created.run.tasks) {
      columns.set(task.taskId, {
        holder: null,
        epoch: 0,
        leaseExpiresAt: null,
        receiptId: null,
        receiptDeadlineAt: null,
        lastReason: 'submitted',
        checkpoints: new Set(),
        output: null,
      });
    }
    this.workflows.push({
      id: ids.workflowId,
      definition,
      idempotencyKey,
      run: created.run,
      columns,
    });
    return created.transitions.map((row) => logRow(ids.workflowId, row));
  }

  /** One event through the pure reducer, and the engine columns its edges imply. */
  apply(taskId: string, event: TaskEvent, clock: RunClock, cause: EventCause = {}): ModelOutcome {
    const { workflow } = this.task(taskId);
    const decision = applyTaskEvent(workflow.definition, workflow.run, taskId, event, clock);
    if (!decision.ok) {
      const { task, columns } = this.task(taskId);
      return {
        kind: 'refused',
        refusal: decision.refusal,
        state: task.snapshot.state,
        reason: columns.lastReason,
      };
    }
    workflow.run = decision.run;
    this.absorb(workflow, decision.transitions, clock.now, { taskId, ...cause });
    const { task, columns } = this.task(taskId);
    return {
      kind: 'applied',
      rows: decision.transitions.map((row) => {
        const logged = logRow(workflow.id, row);
        // The engine records the receipt an edge into awaiting_receipt waits for (R23).
        return row.kind === 'task' &&
          row.taskId === taskId &&
          row.edge.to === 'awaiting_receipt' &&
          cause.receipt !== undefined
          ? { ...logged, detail: { ...(row.edge.detail ?? {}), receiptId: cause.receipt.id } }
          : logged;
      }),
      state: task.snapshot.state,
      reason: columns.lastReason,
    };
  }

  /** A workflow-wide cancel through the pure reducer. */
  cancelWorkflow(workflowId: string, actor: Actor, clock: RunClock): LogRow[] {
    const workflow = this.workflow(workflowId);
    const decided = cancelWorkflowRun(workflow.definition, workflow.run, actor, clock);
    workflow.run = decided.run;
    this.absorb(workflow, decided.transitions, clock.now, null);
    return decided.transitions.map((row) => logRow(workflow.id, row));
  }

  /**
   * The fenced "effect started" write (R10, R19): the marker is set only while `leased` (under
   * `cancel_requested` the cancel wins); a checkpoint is recorded in either state.
   */
  recordEffect(taskId: string, checkpoint: string | null): void {
    const { workflow, task, columns } = this.task(taskId);
    if (checkpoint !== null) columns.checkpoints.add(checkpoint);
    if (task.snapshot.state !== 'leased') return;
    this.patchSnapshot(workflow, taskId, { effectStarted: true });
  }

  /** Lease renewal (R9): not an edge, only a new expiry. */
  renew(taskId: string, now: Date): void {
    this.task(taskId).columns.leaseExpiresAt = new Date(now.getTime() + leaseMs);
  }

  private patchSnapshot(
    workflow: ModelWorkflow,
    taskId: string,
    patch: Partial<TaskSnapshot>,
  ): void {
    workflow.run = {
      ...workflow.run,
      tasks: workflow.run.tasks.map((task) =>
        task.taskId === taskId ? { ...task, snapshot: { ...task.snapshot, ...patch } } : task,
      ),
    };
  }

  /**
   * The engine columns after each task edge: a claim takes the lease (holder, epoch + 1,
   * expiry = now + lease, R7); leaving leased/cancel_requested drops it; waiting for a receipt
   * records which receipt and until when (R23).
   */
  private absorb(
    workflow: ModelWorkflow,
    transitions: readonly PlannedTransition[],
    now: Date,
    cause: ({ readonly taskId: string } & EventCause) | null,
  ): void {
    for (const row of transitions) {
      if (row.kind !== 'task') continue;
      const columns = workflow.columns.get(row.taskId) as EngineColumns;
      const isCause = cause !== null && cause.taskId === row.taskId;
      columns.lastReason = row.edge.reason;
      if (isCause && cause.output !== undefined) columns.output = cause.output;
      if (isCause && row.edge.reason === 'lease_acquired') {
        columns.holder = cause.holder ?? null;
        columns.epoch += 1;
        columns.leaseExpiresAt = new Date(now.getTime() + leaseMs);
      } else if (!leaseHoldingStates.includes(row.edge.to)) {
        columns.holder = null;
        columns.leaseExpiresAt = null;
      }
      if (row.edge.to !== 'awaiting_receipt') {
        columns.receiptId = null;
        columns.receiptDeadlineAt = null;
      } else if (isCause && cause.receipt !== undefined) {
        columns.receiptId = cause.receipt.id;
        columns.receiptDeadlineAt = new Date(now.getTime() + cause.receipt.timeoutMs);
      }
    }
  }
}

function stepOf(definition: WorkflowDefinition, name: string): WorkflowStep {
  const found = definition.steps.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`${definition.name} has no step ${name}`);
  return found;
}

/** A planned transition as the row the engine appends (R24). */
function logRow(workflowId: string, row: PlannedTransition): LogRow {
  if (row.kind === 'workflow') {
    return {
      workflowId,
      taskId: null,
      step: null,
      from: row.from,
      to: row.to,
      reason: row.reason,
      errorCategory: null,
      errorSummary: null,
      actor: row.actor,
      attempt: 0,
      // The engine keeps the step whose edge changed the parent in the row's detail.
      detail: row.step === null ? null : { step: row.step },
    };
  }
  return {
    workflowId,
    taskId: row.taskId,
    step: row.step,
    from: row.edge.from,
    to: row.edge.to,
    reason: row.edge.reason,
    errorCategory: row.edge.errorCategory,
    errorSummary: row.edge.errorSummary,
    actor: row.edge.actor,
    attempt: row.edge.attempt,
    detail: row.edge.detail,
  };
}
