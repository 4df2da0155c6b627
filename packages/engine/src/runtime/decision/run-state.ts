import {
  applyTaskEvent,
  cancelWorkflowRun,
  claimRule,
  eventOutputJson,
  getStep,
  holdsConcurrencySlot,
  type PlannedTransition,
  parseActor,
  type RunTask,
  type StepInputProblem,
  type TaskEdge,
  type WorkflowDefinition,
  type WorkflowRun,
  type WorkflowState,
} from '@causeway/workflow/internal';
import { snapshotOf, type TaskRecord, type WorkflowRecord } from '../../db/rows';
import type { NewOutboxRow, TaskWrite } from '../../db/settle/run-changes-write';
import type { NewTransitionRow } from '../../db/transition-row';
import { EngineError } from '../../errors';
import { ChildEffects, type ChildWork } from './child-effects';
import type {
  ApplyContext,
  EventOutcome,
  EventRequest,
  WorkflowCancelRequest,
} from './event-request';
import { holdsLease } from './holds-lease';
import { logRowOf } from './log-rows';
import { nextRecord, ruleOf, withReceipt } from './next-record';
import { type WaitEvent, waitDetail, waitEventOf } from './wait-event';

/** A task that started waiting in this decision, for the event it waits for (R37). */
export interface WaitEntry {
  readonly taskId: string;
  readonly workflowId: string;
  readonly step: string;
  readonly name: string;
  readonly key: string;
}

/** The locked workflows and their tasks while events are applied in memory. */
export class RunState {
  readonly transitions: NewTransitionRow[] = [];
  private readonly workflows = new Map<string, { record: WorkflowRecord; run: WorkflowRun }>();
  private readonly tasks = new Map<string, TaskRecord>();
  private readonly original = new Map<string, TaskRecord>();
  private readonly changedTaskIds = new Set<string>();
  private readonly outputJsonById = new Map<string, string>();
  private readonly wake = new Set<string>();
  /** Send requests of edges into awaiting_receipt (R22). */
  readonly outbox: NewOutboxRow[] = [];
  /** Locked workflows whose definition (at their version, R54) this engine lacks: name, by id. */
  readonly undefinedNames = new Map<string, string>();
  /** Waits started and not yet matched against the stored events (`takeWaitEntries`). */
  private waits: WaitEntry[] = [];
  /** The children of the steps this decision moves (R43–R47). */
  private readonly children: ChildEffects;
  /** The events of waits the machine is starting in this decision, by task (`checkStepInput`). */
  private readonly startingWaits = new Map<string, WaitEvent>();

  constructor(
    private readonly context: ApplyContext,
    workflows: readonly WorkflowRecord[],
    tasks: readonly TaskRecord[],
    private readonly now: Date,
  ) {
    this.children = new ChildEffects(context.definitions, now);
    const tasksOf = new Map<string, TaskRecord[]>();
    for (const task of tasks) {
      this.tasks.set(task.id, task);
      this.original.set(task.id, task);
      const siblings = tasksOf.get(task.workflowId);
      if (siblings === undefined) tasksOf.set(task.workflowId, [task]);
      else siblings.push(task);
    }
    for (const record of workflows) {
      const definition = this.context.definitions.at(record.name, record.version);
      if (definition === undefined) {
        // Another version of the service defines it (a rolling deploy): leave it alone.
        this.undefinedNames.set(record.id, versionLabel(record));
        continue;
      }
      // Definition order, so edges of one decision are logged in step order.
      const order = new Map(definition.steps.map((step, index) => [step.name, index]));
      const runTasks: RunTask[] = (tasksOf.get(record.id) ?? [])
        .sort((a, b) => (order.get(a.step) ?? 0) - (order.get(b.step) ?? 0))
        .map((task) => ({ taskId: task.id, step: task.step, snapshot: snapshotOf(task) }));
      this.workflows.set(record.id, {
        record,
        run: { workflowId: record.id, state: record.state, tasks: runTasks },
      });
    }
  }

  apply(asked: EventRequest, holder: string | undefined): EventOutcome {
    let request = asked;
    const task = this.tasks.get(request.taskId);
    if (task === undefined) return { kind: 'skipped', taskId: request.taskId };
    const entry = this.workflows.get(task.workflowId);
    const undefinedName = this.undefinedNames.get(task.workflowId);
    if (undefinedName !== undefined) {
      return { kind: 'undefined_workflow', taskId: request.taskId, name: undefinedName };
    }
    if (entry === undefined) return { kind: 'skipped', taskId: request.taskId };
    const stale =
      (request.fence !== undefined && !holdsLease(task, request.fence, this.now)) ||
      (request.precondition !== undefined && !request.precondition(task, this.now));
    if (stale) {
      return { kind: 'stale', taskId: request.taskId, task };
    }
    const definition = this.definitionOf(entry.record);
    request = this.children.admitRequested(request, { workflow: entry.record, task });
    const decision = applyTaskEvent(
      definition,
      entry.run,
      task.id,
      request.event,
      { now: this.now, random: this.context.random },
      (starting) => this.checkStepInput(definition, entry.record, starting, request),
      { hasChildren: task.children !== null },
    );
    if (!decision.ok) return { kind: 'refused', taskId: task.id, refusal: decision.refusal, task };
    this.absorb(entry, decision.run, decision.transitions, { request, holder });
    const updated = this.tasks.get(task.id) as TaskRecord;
    const edge = (
      decision.transitions.find((row) => row.kind === 'task' && row.taskId === task.id) as {
        edge: TaskEdge;
      }
    ).edge;
    return { kind: 'applied', taskId: task.id, edge, task: updated };
  }

  cancelWorkflow(request: WorkflowCancelRequest): {
    workflowId: string;
    edges: number;
    state: WorkflowState | undefined;
  } {
    const undefinedName = this.undefinedNames.get(request.workflowId);
    if (undefinedName !== undefined) {
      throw new EngineError(
        'conflict',
        `workflow ${request.workflowId} is a "${undefinedName}", which this engine does not define`,
      );
    }
    const entry = this.workflows.get(request.workflowId);
    if (entry === undefined) return { workflowId: request.workflowId, edges: 0, state: undefined };
    const decided = cancelWorkflowRun(
      this.definitionOf(entry.record),
      entry.run,
      request.actor,
      { now: this.now, random: this.context.random },
      request.reason,
    );
    this.absorb(entry, decided.run, decided.transitions, null);
    return {
      workflowId: request.workflowId,
      edges: decided.transitions.filter((row) => row.kind === 'task').length,
      state: decided.run.state,
    };
  }

  taskWrites(): TaskWrite[] {
    return [...this.changedTaskIds].map((id) => {
      const before = this.original.get(id) as TaskRecord;
      const after = this.tasks.get(id) as TaskRecord;
      return {
        id,
        expectedState: before.state,
        expectedEpoch: before.leaseEpoch,
        state: after.state,
        attempt: after.attempt,
        replayCount: after.replayCount,
        effectStarted: after.effectStarted,
        runAt: after.runAt,
        deadlineAt: after.deadlineAt,
        leaseHolder: after.leaseHolder,
        leaseEpoch: after.leaseEpoch,
        leaseExpiresAt: after.leaseExpiresAt,
        outputJson: this.outputJsonById.get(id) ?? null,
        receiptId: after.receiptId,
        receiptDeadlineAt: after.receiptDeadlineAt,
        lastErrorCategory: after.lastErrorCategory,
        lastError: after.lastError,
        eventName: after.eventName,
        eventKey: after.eventKey,
        waitSince: after.waitSince,
        waitTimeoutAt: after.waitTimeoutAt,
      };
    });
  }

  workflowChanges(): { id: string; expectedState: string; state: string }[] {
    return [...this.workflows.values()]
      .filter((entry) => entry.run.state !== entry.record.state)
      .map((entry) => ({
        id: entry.record.id,
        expectedState: entry.record.state,
        state: entry.run.state,
      }));
  }

  currentTasks(): ReadonlyMap<string, TaskRecord> {
    return this.tasks;
  }

  queuesToWake(): Set<string> {
    return this.wake;
  }

  /** The output an event step gets from an event's payload, or null if its schema refuses it. */
  eventOutputJson(taskId: string, payload: unknown): string | null {
    const task = this.tasks.get(taskId);
    const entry = task === undefined ? undefined : this.workflows.get(task.workflowId);
    if (task === undefined || entry === undefined) return null;
    return eventOutputJson(getStep(this.definitionOf(entry.record), task.step), payload);
  }

  /** The waits started since the last call, with a key an event can match. */
  takeWaitEntries(): WaitEntry[] {
    const entries = this.waits;
    this.waits = [];
    return entries;
  }

  /** What the children of the steps this decision moved need (R43–R47). */
  childWork(): ChildWork {
    const records = new Map(
      [...this.workflows.values()].map((entry) => [entry.record.id, entry.record]),
    );
    return this.children.work(this.workflowChanges(), records);
  }

  /**
   * Evaluates the functions of a step the machine is about to start (R58), with the upstream
   * outputs as this decision leaves them (the request's own output included): an event step's
   * key (the event, kept for the edge's row) or a map step's list and children's inputs, or what
   * went wrong, for the machine to end the step.
   */
  private checkStepInput(
    definition: WorkflowDefinition,
    record: WorkflowRecord,
    starting: RunTask,
    request: EventRequest,
  ): StepInputProblem | null {
    const outputJson = request.extra?.outputJson;
    const step = getStep(definition, starting.step);
    if (step.map !== undefined) {
      return this.children.checkMap(
        definition,
        { workflow: record, task: this.tasks.get(starting.taskId) as TaskRecord },
        this.tasks.values(),
        outputJson === undefined || request.taskId === starting.taskId
          ? undefined
          : { taskId: request.taskId, output: JSON.parse(outputJson) },
      );
    }
    const found = waitEventOf(
      definition,
      step,
      record,
      this.tasks.values(),
      outputJson === undefined
        ? undefined
        : { taskId: request.taskId, output: JSON.parse(outputJson) },
    );
    if (!found.ok) return found.problem;
    this.startingWaits.set(starting.taskId, found.event);
    return null;
  }

  /** The event of a wait an edge starts, as `checkStepInput` computed it before the machine chose. */
  private startedWait(taskId: string): WaitEvent {
    const event = this.startingWaits.get(taskId);
    if (event === undefined) {
      throw new Error(`task ${taskId} starts a wait whose event key was never computed`);
    }
    this.startingWaits.delete(taskId);
    return event;
  }

  private definitionOf(record: WorkflowRecord): WorkflowDefinition {
    const definition = this.context.definitions.at(record.name, record.version);
    if (definition === undefined) {
      throw new Error(
        `workflow ${record.id} is a "${versionLabel(record)}", which this engine does not define`,
      );
    }
    return definition;
  }

  /** Takes the machine's decision into the in-memory rows and the log. */
  private absorb(
    entry: { record: WorkflowRecord; run: WorkflowRun },
    run: WorkflowRun,
    transitions: readonly PlannedTransition[],
    cause: { request: EventRequest; holder: string | undefined } | null,
  ): void {
    entry.run = run;
    for (const row of transitions) {
      if (row.kind === 'workflow') {
        this.transitions.push(logRowOf(run.workflowId, row));
        continue;
      }
      const before = this.tasks.get(row.taskId) as TaskRecord;
      const snapshot = run.tasks.find((task) => task.taskId === row.taskId)?.snapshot;
      if (snapshot === undefined) continue;
      const isCause = cause !== null && cause.request.taskId === row.taskId;
      const outputJson = isCause ? cause.request.extra?.outputJson : undefined;
      if (outputJson !== undefined) this.outputJsonById.set(row.taskId, outputJson);
      const rule = ruleOf(row.edge);
      const send = isCause ? cause.request.extra?.outbox : undefined;
      if (send !== undefined && rule.receipt === 'await') {
        this.outbox.push({ ...send, taskId: row.taskId, workflowId: run.workflowId });
      }
      const waitEvent = rule.wait === 'start' ? this.startedWait(row.taskId) : undefined;
      this.tasks.set(
        row.taskId,
        nextRecord(before, row.edge, snapshot, {
          now: this.now,
          leaseMs: this.context.leaseMs,
          holder: isCause ? cause.holder : undefined,
          extra: isCause ? cause.request.extra : undefined,
          waitEvent,
        }),
      );
      this.changedTaskIds.add(row.taskId);
      this.children.onEdge(
        this.tasks.get(row.taskId) as TaskRecord,
        row.edge,
        parseActor(row.edge.actor),
      );
      const detail = {
        ...withReceipt(row.edge, isCause ? cause.request.extra : undefined),
        ...this.children.startDetail(row.taskId, row.edge),
      };
      this.transitions.push({
        ...logRowOf(run.workflowId, row),
        detail:
          waitEvent === undefined
            ? Object.keys(detail).length === 0
              ? null
              : detail
            : { ...detail, ...waitDetail(waitEvent, { at: snapshot.waitTimeoutAt }) },
      });
      if (waitEvent !== undefined) {
        this.waits.push({
          taskId: row.taskId,
          workflowId: run.workflowId,
          step: row.step,
          name: waitEvent.name,
          key: waitEvent.key,
        });
      }
      // Ready now: a worker of its queue may claim it at once.
      if (
        row.edge.to === claimRule.from &&
        (snapshot.runAt === null || snapshot.runAt <= this.now)
      ) {
        this.wake.add(before.queue);
      }
      // A slot of its concurrency key freed (R50): a task of the key may be claimable now.
      const after = this.tasks.get(row.taskId) as TaskRecord;
      if (
        before.concurrency != null &&
        holdsConcurrencySlot(before.state, before.leaseHolder) &&
        !holdsConcurrencySlot(after.state, after.leaseHolder)
      ) {
        this.wake.add(before.queue);
      }
    }
  }
}

/** `name` with the version it records, as messages name a workflow this engine lacks (R54). */
function versionLabel(record: WorkflowRecord): string {
  return record.version === null ? record.name : `${record.name}@${record.version}`;
}
