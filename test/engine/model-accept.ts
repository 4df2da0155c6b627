/**
 * A workflow as the engine model test expects its acceptance to write it (R2, R3, R34): the
 * parent's creation row, then each step's `submitted` row in step order — roots queued (R36:
 * after the submit's delay plus their own, which their row says; an event step waiting, R37:
 * its row says for what, and how long from acceptance), the rest pending, by the client,
 * attempt 0 (the contract's states and edge tables). A schedule's submit (R40) and a parent
 * step's (R43) take the creation edges themselves, their detail naming them; a child's
 * deadline is its parent step's at the latest (R46).
 */
import {
  createWorkflowRun,
  type RunTask,
  type TaskState,
  type WorkflowDefinition,
  type WorkflowRun,
  type WorkflowState,
  type WorkflowStep,
} from '@causeway/workflow/internal';
import { specParentState } from '../helpers/contract-tables';
import { keyProblemOf, waitOf } from './model-event-store';
import {
  type EngineColumns,
  type LogRow,
  parentRow,
  startedWait,
  type WaitStart,
} from './model-rows';

/** Who submitted a workflow when not a client (R40, R43): the actor text and what the detail adds. */
export interface SubmitOrigin {
  readonly actor: string;
  readonly detail: Readonly<Record<string, unknown>>;
}

export interface AcceptOptions {
  readonly delayMs?: number;
  readonly origin?: SubmitOrigin;
  /** R46: a child's deadline is its parent step's at the latest. */
  readonly deadlineCapAt?: Date | null;
}

/** An accepted workflow: its run, state, columns and log, and the tasks that wait at once. */
export interface Accepted {
  readonly run: WorkflowRun;
  readonly parent: WorkflowState;
  readonly columns: Map<string, EngineColumns>;
  readonly log: LogRow[];
  readonly waiting: readonly string[];
}

export function stepOf(definition: WorkflowDefinition, name: string): WorkflowStep {
  const found = definition.steps.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`${definition.name} has no step ${name}`);
  return found;
}

export function acceptWorkflow(
  definition: WorkflowDefinition,
  ids: { readonly workflowId: string; readonly taskIds: readonly string[] },
  now: Date,
  input: unknown,
  options: AcceptOptions = {},
): Accepted {
  const delayMs = options.delayMs ?? 0;
  const { origin } = options;
  // R58: a first event step's key comes from the input alone; one that throws ends the step.
  const created = createWorkflowRun(definition, ids, now, delayMs, (task: RunTask) =>
    keyProblemOf(stepOf(definition, task.step), input, {}),
  );
  const cap = options.deadlineCapAt ?? null;
  const run: WorkflowRun =
    cap === null
      ? created.run
      : {
          ...created.run,
          tasks: created.run.tasks.map((task) => {
            const own = task.snapshot.deadlineAt;
            const deadlineAt = own === null || own.getTime() > cap.getTime() ? cap : own;
            return { ...task, snapshot: { ...task.snapshot, deadlineAt } };
          }),
        };
  const byOrigin = (row: LogRow): LogRow =>
    origin === undefined
      ? row
      : {
          ...row,
          actor: origin.actor,
          detail: { ...(row.detail as Record<string, unknown> | null), ...origin.detail },
        };
  const waits = new Map<string, WaitStart>();
  const taskRows = run.tasks.flatMap((task): LogRow[] => {
    const step = stepOf(definition, task.step);
    const problem = step.after.length === 0 ? keyProblemOf(step, input, {}) : null;
    const wait = step.after.length === 0 && problem === null ? waitOf(step, input, {}) : null;
    if (wait !== null) waits.set(task.taskId, wait);
    const rootDelayMs = delayMs + (step.policy.delayMs ?? 0);
    const created = byOrigin({
      workflow_id: ids.workflowId,
      task_id: task.taskId,
      step: task.step,
      from_state: null,
      to_state:
        step.after.length > 0 || problem !== null
          ? 'pending'
          : wait === null
            ? 'queued'
            : 'waiting',
      reason: 'submitted',
      error_category: null,
      error_summary: null,
      actor: 'client',
      attempt: 0,
      detail:
        wait !== null
          ? { eventName: wait.name, eventKey: wait.key, timeoutMs: wait.timeoutMs }
          : step.after.length === 0 && problem === null && rootDelayMs > 0
            ? { delayMs: rootDelayMs }
            : null,
    });
    if (problem === null) return [created];
    // No creation edge leads to dead: created pending, the step ends at once by the system.
    const failed: LogRow = {
      ...created,
      from_state: 'pending',
      to_state: 'dead',
      reason: 'step_input_failed',
      error_category: problem.category,
      error_summary: problem.summary,
      actor: 'system',
      detail: { input: problem.input, error: problem.summary },
    };
    return [created, failed];
  });
  const lastRows = [...new Map(taskRows.map((row) => [row.task_id, row])).values()];
  const parent = specParentState(lastRows.map((row) => row.to_state as TaskState));
  const columns = new Map<string, EngineColumns>();
  const waiting: string[] = [];
  for (const row of lastRows) {
    const fresh = { lease: null, epoch: 0, receipt: null, checkpoints: new Set<string>() };
    const wait = waits.get(row.task_id as string);
    columns.set(row.task_id as string, {
      ...fresh,
      wait: wait === undefined ? null : startedWait(wait, now),
      last: row,
      output: null,
    });
    if (wait !== undefined) waiting.push(row.task_id as string);
  }
  const log = [byOrigin(parentRow(ids.workflowId, null, parent, null)), ...taskRows];
  return { run, parent, columns, log, waiting };
}
