/**
 * The model side of the engine model test.
 *
 * Shared with production on purpose: the PURE machine of @causeway/workflow
 * (`createWorkflowRun`, `applyTaskEvent`, `cancelWorkflowRun`) decides each edge — whether it
 * is taken, its reason, error, attempt, run_at, deadline and detail. The engine is checked
 * against the machine; the machine is checked against its own independent model in
 * test/workflow/machine.property.test.ts.
 *
 * Everything the ENGINE adds around a decision is the test's own, from the contract: the rows
 * and columns of model-rows.ts, the parent by the contract's aggregation table, and here the order of
 * one transaction's rows — the event's own edge, then the edges it caused in step order, then
 * the parent's row if it moved (a submission: the parent's creation row first) — and the
 * actor text of the event's own row (R24), written for whoever sent the event.
 *
 * The contract is silent on the order within one transaction; "step order" is the engine's
 * stated convention. The machine plans a cascade level by level, which is the same order for
 * this test's shapes (one step, a chain, a diamond) but not for every DAG.
 *
 * Event steps (R37): the model knows what each wait waits for — the event's name and its key,
 * computed from the input and the upstream outputs the model holds — and keeps the events
 * sent (model-event-store.ts). A wait that starts takes the first kept event of its name and
 * key received after its workflow was accepted, in the same transaction, once the
 * transaction's own events are applied (`completeKeptWaits`; the engine's stated order).
 *
 * Child workflows (R43–R47): every edge and every change of a workflow's state is told to
 * model-children.ts, which follows, after the transaction's own rows and kept events, what
 * they ask of children (`followUp`): children started, cancelled, replayed, steps settled.
 */
import type {
  Actor,
  PlannedTransition,
  ReasonCode,
  Refusal,
  RunClock,
  RunTask,
  StepInputCheck,
  TaskEdge,
  TaskEvent,
  TaskState,
  WorkflowDefinition,
  WorkflowRun,
  WorkflowState,
  WorkflowStep,
} from '@causeway/workflow/internal';
import { applyTaskEvent, cancelWorkflowRun } from '@causeway/workflow/internal';
import { specActorText, specParentState } from '../helpers/contract-tables';
import { type AcceptOptions, acceptWorkflow, stepOf } from './model-accept';
import { ModelChildren } from './model-children';
import { type ChildIdSource, childHostOf } from './model-children-host';
import { keyProblemOf, ModelEventStore, upstreamOutputs, waitOf } from './model-event-store';
import {
  type EngineColumns,
  type EventCause,
  fencedWrite,
  type LogRow,
  parentRow,
  snapshotColumns,
  takeEdge,
  waitColumns,
} from './model-rows';
import { leaseMs } from './model-workflows';

export type { SubmitOrigin } from './model-accept';
export type { EngineColumns, EventCause, LogRow } from './model-rows';

export interface ModelWorkflow {
  readonly id: string;
  readonly definition: WorkflowDefinition;
  readonly idempotencyKey: string | null;
  readonly input: unknown;
  /** Its acceptance's place in the sequence of acceptances and events (R37). */
  readonly acceptedSeq: number;
  run: WorkflowRun;
  /** The parent's state as its own log rows say (R25). */
  parent: WorkflowState;
  readonly columns: Map<string, EngineColumns>;
  /** Every row of the workflow's log so far, in log order (R24: append-only). */
  readonly log: LogRow[];
}

/** A task with everything the model knows about it. */
export interface ModelTask {
  readonly workflow: ModelWorkflow;
  readonly task: RunTask;
  readonly step: WorkflowStep;
  readonly columns: EngineColumns;
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

/** A task edge of a decision, found by task id. */
type EdgesByTask = ReadonlyMap<string, TaskEdge>;

export class EngineModel {
  readonly workflows: ModelWorkflow[] = [];
  readonly events = new ModelEventStore();
  /** Which steps await which child workflows, and what their ends ask (model-children.ts). */
  readonly children = new ModelChildren(childHostOf(this));
  /** Tasks that started waiting since the last `completeKeptWaits`, in log order. */
  private startedWaits: string[] = [];

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

  /** The task's row of causeway_tasks as the model expects it (checkpoints: their sorted names). */
  expectedTaskRow({ workflow, task, step, columns }: ModelTask): Record<string, unknown> {
    const decided = Object.entries(snapshotColumns).map(([name, read]) => [
      name,
      read(task.snapshot),
    ]);
    return {
      id: task.taskId,
      workflow_id: workflow.id,
      step: task.step,
      queue: step.queue,
      max_attempts: step.policy.maxAttempts,
      ...Object.fromEntries(decided),
      lease_holder: columns.lease?.holder ?? null,
      lease_epoch: columns.epoch,
      lease_expires_at: columns.lease?.expiresAt ?? null,
      receipt_id: columns.receipt?.id ?? null,
      receipt_deadline_at: columns.receipt?.deadlineAt ?? null,
      checkpoints: [...columns.checkpoints].sort(),
      output: columns.output,
      ...waitColumns(columns),
      ...this.children.columns(task.taskId),
    };
  }

  /**
   * The rows that follow a transaction's own edges in it: the kept events the waits it started
   * take (R37, `logged` as in `completeKeptWaits`), then what its edges ask of child workflows,
   * round by round (R43–R47); `ids` names the children the engine started.
   */
  followUp(
    clock: RunClock,
    logged: readonly Pick<LogRow, 'task_id' | 'reason'>[],
    ids: ChildIdSource,
  ): LogRow[] {
    return [...this.completeKeptWaits(clock, logged), ...this.children.follow(clock, ids)];
  }

  /** The task's state and the reason of its latest edge: what an operation answers (R15). */
  current(taskId: string): { readonly state: TaskState; readonly reason: ReasonCode } {
    const { task, columns } = this.task(taskId);
    return { state: task.snapshot.state, reason: columns.last.reason as ReasonCode };
  }

  /**
   * A new workflow (R2, R3), as model-accept.ts writes it: its creation rows, by the client (a
   * schedule's or a parent step's submit takes them itself, R40, R43).
   */
  submit(
    definition: WorkflowDefinition,
    idempotencyKey: string | null,
    ids: { readonly workflowId: string; readonly taskIds: readonly string[] },
    now: Date,
    input: unknown,
    options: AcceptOptions = {},
  ): LogRow[] {
    const accepted = acceptWorkflow(definition, ids, now, input, options);
    this.startedWaits.push(...accepted.waiting);
    this.workflows.push({
      id: ids.workflowId,
      definition,
      idempotencyKey,
      input,
      acceptedSeq: this.events.nextSeq(),
      run: accepted.run,
      parent: accepted.parent,
      columns: accepted.columns,
      log: accepted.log,
    });
    return [...accepted.log];
  }

  /**
   * R37: the waits started since the last call take the first kept event of their name and
   * key received after their workflow was accepted, by the event's sender, with its payload as
   * output; a completion may start further waits, taken in turn. The contract does not order
   * the waits of one transaction: they are taken in the order the engine's log shows
   * (`logged`: the rows the command appended), else in the order they started.
   */
  completeKeptWaits(
    clock: RunClock,
    logged: readonly Pick<LogRow, 'task_id' | 'reason'>[] = [],
  ): LogRow[] {
    const rows: LogRow[] = [];
    const position = (taskId: string) => {
      const index = logged.findIndex(
        (row) => row.task_id === taskId && row.reason === 'event_received',
      );
      return index === -1 ? Number.POSITIVE_INFINITY : index;
    };
    for (let started = this.takeStartedWaits(); started.length > 0; ) {
      started.sort((a, b) => position(a) - position(b));
      for (const taskId of started) {
        const { workflow, columns } = this.task(taskId);
        const wait = columns.wait;
        if (wait === null) continue;
        const kept = this.events.firstMatch(wait.name, wait.key, workflow.acceptedSeq);
        if (kept === undefined) continue;
        const event: TaskEvent = {
          type: 'event_received',
          actor: kept.sender,
          eventId: kept.id,
          ...(kept.reason === null ? {} : { reason: kept.reason }),
        };
        const outcome = this.apply(taskId, event, clock, { output: kept.payload });
        if (outcome.kind === 'applied') rows.push(...outcome.rows);
      }
      started = this.takeStartedWaits();
    }
    return rows;
  }

  /** Whether a command applied events and did not look for kept events (a test mistake). */
  hasStartedWaits(): boolean {
    return this.startedWaits.length > 0;
  }

  private takeStartedWaits(): string[] {
    const started = this.startedWaits;
    this.startedWaits = [];
    return started;
  }

  /** One event through the pure machine, and the rows and columns the engine adds to it. */
  apply(taskId: string, event: TaskEvent, clock: RunClock, cause: EventCause = {}): ModelOutcome {
    const { workflow } = this.task(taskId);
    const decision = applyTaskEvent(
      workflow.definition,
      workflow.run,
      taskId,
      event,
      clock,
      keyCheck(workflow, this.task(taskId).task.step, cause),
      { hasChildren: this.children.has(taskId) },
    );
    if (!decision.ok) {
      const { task, columns } = this.task(taskId);
      return {
        kind: 'refused',
        refusal: decision.refusal,
        state: task.snapshot.state,
        reason: columns.last.reason as ReasonCode,
      };
    }
    workflow.run = decision.run;
    const edges = edgesOf(decision.transitions);
    const own = edges.get(taskId) as TaskEdge;
    // R24: the row names whoever sent the event; the edge table has the system finalize a claim past its
    // deadline, and an event without a sender is the system's.
    const sender =
      !('actor' in event) || own.reason === 'deadline_exceeded_before_start'
        ? 'system'
        : specActorText(event.actor);
    const actorOf = (id: string, edge: TaskEdge) => (id === taskId ? sender : edge.actor);
    const rows = this.record(workflow, taskId, edges, actorOf, clock.now, cause);
    const { task, columns } = this.task(taskId);
    return {
      kind: 'applied',
      rows,
      state: task.snapshot.state,
      reason: columns.last.reason as ReasonCode,
    };
  }

  /** A workflow-wide cancel through the pure machine: its edges in step order, all by the caller. */
  cancelWorkflow(workflowId: string, actor: Actor, clock: RunClock, reason?: string): LogRow[] {
    const workflow = this.workflow(workflowId);
    const decided = cancelWorkflowRun(workflow.definition, workflow.run, actor, clock, reason);
    workflow.run = decided.run;
    const edges = edgesOf(decided.transitions);
    const first = workflow.run.tasks.find((task) => edges.has(task.taskId));
    if (first === undefined) return [];
    const caller = specActorText(actor);
    return this.record(workflow, first.taskId, edges, () => caller, clock.now, {});
  }

  /**
   * The fenced "effect started" / checkpoint write after it landed (`fencedWrite`): a
   * checkpoint is recorded, the marker set where the state allows it.
   */
  recordEffect(taskId: string, checkpoint: string | null): void {
    const { workflow, task, columns } = this.task(taskId);
    const write = fencedWrite[task.snapshot.state];
    if (write === undefined) throw new Error(`a fenced write landed on a ${task.snapshot.state}`);
    if (checkpoint !== null) columns.checkpoints.add(checkpoint);
    if (!write.startsEffect) return;
    workflow.run = {
      ...workflow.run,
      tasks: workflow.run.tasks.map((candidate) =>
        candidate.taskId === taskId
          ? { ...candidate, snapshot: { ...candidate.snapshot, effectStarted: true } }
          : candidate,
      ),
    };
  }

  /** Lease renewal (R9): not an edge, only a new expiry for the same claim. */
  renew(taskId: string, now: Date): void {
    const { columns } = this.task(taskId);
    if (columns.lease === null) throw new Error('renewed a task nobody holds');
    columns.lease = { ...columns.lease, expiresAt: new Date(now.getTime() + leaseMs) };
  }

  /**
   * The rows of one decision in the model's order — the edge of `first`, the others in step
   * order, the parent's row last if the aggregation table moved it — and each edge's columns.
   */
  private record(
    workflow: ModelWorkflow,
    first: string,
    edges: EdgesByTask,
    actorOf: (taskId: string, edge: TaskEdge) => string,
    now: Date,
    cause: EventCause,
  ): LogRow[] {
    const ordered = [
      ...workflow.run.tasks.filter((task) => task.taskId === first),
      ...workflow.run.tasks.filter((task) => task.taskId !== first && edges.has(task.taskId)),
    ];
    const rows = ordered.map((task) => {
      const edge = edges.get(task.taskId) as TaskEdge;
      const isFirst = task.taskId === first;
      const actor = actorOf(task.taskId, edge);
      const columns = workflow.columns.get(task.taskId) as EngineColumns;
      const step = stepOf(workflow.definition, task.step);
      const wait =
        task.snapshot.state === 'waiting'
          ? waitOf(step, workflow.input, upstreamOutputs(workflow, step))
          : null;
      if (wait !== null) this.startedWaits.push(task.taskId);
      if (edge.reason === 'event_received') {
        const eventId = (edge.detail as { eventId: string }).eventId;
        this.events.recordDelivery(eventId, {
          taskId: task.taskId,
          workflowId: workflow.id,
          step: task.step,
          transaction: now,
        });
      }
      const row = takeEdge(
        workflow.id,
        columns,
        task,
        edge,
        actor,
        now,
        isFirst ? cause : {},
        wait,
      );
      this.children.onEdge(row);
      return row;
    });
    const [causeRow] = rows;
    const parent = specParentState(workflow.run.tasks.map((task) => task.snapshot.state));
    if (causeRow !== undefined && parent !== workflow.parent) {
      rows.push(parentRow(workflow.id, workflow.parent, parent, causeRow));
      this.children.onWorkflowChange(workflow.id, workflow.parent, parent);
      workflow.parent = parent;
    }
    workflow.log.push(...rows);
    return rows;
  }
}

/**
 * R58: before an event step waits, its key from the input and the upstream outputs as the
 * decision leaves them (the cause's own output, `cause.output`, included).
 */
function keyCheck(workflow: ModelWorkflow, causeStep: string, cause: EventCause): StepInputCheck {
  return (task: RunTask) => {
    const step = stepOf(workflow.definition, task.step);
    const results = upstreamOutputs(workflow, step);
    if (cause.output !== undefined && causeStep in results) results[causeStep] = cause.output;
    return keyProblemOf(step, workflow.input, results);
  };
}

/** The task edges the machine decided, by task; each task takes at most one per decision. */
function edgesOf(transitions: readonly PlannedTransition[]): EdgesByTask {
  const edges = new Map<string, TaskEdge>();
  for (const row of transitions) {
    if (row.kind !== 'task') continue;
    if (edges.has(row.taskId)) throw new Error(`task ${row.taskId} took two edges at once`);
    edges.set(row.taskId, row.edge);
  }
  return edges;
}
