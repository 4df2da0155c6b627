import {
  type Actor,
  applyTaskEvent,
  cancelWorkflowRun,
  type PlannedTransition,
  type Refusal,
  type RunTask,
  type TaskEdge,
  type TaskEvent,
  type TaskState,
  type WorkflowDefinition,
  type WorkflowRun,
  type WorkflowState,
} from '@causeway/workflow';
import type { Transaction } from 'kysely';
import { taskClaimLoad } from '../../db/claim/claim-load';
import type { LeaseFence } from '../../db/lease/lease-fence';
import type { LoadedRuns } from '../../db/locked-runs';
import { taskWorkflowIds } from '../../db/reads/record-reads';
import { snapshotOf, type TaskRecord, type WorkflowRecord } from '../../db/rows';
import type { CausewayDatabase } from '../../db/schema';
import {
  type NewOutboxRow,
  runChangesWrite,
  type TaskWrite,
} from '../../db/settle/run-changes-write';
import { workflowLockWithTasks } from '../../db/settle/workflow-lock';
import type { NewTransitionRow } from '../../db/transition-row';
import { EngineError } from '../../errors';
import { stepTableOf } from '../step-table';
import { holdsLease } from './holds-lease';
import { logRowOf } from './log-rows';

/** One event for one task, as the engine asks for it. */
export interface EventRequest {
  readonly taskId: string;
  /** The task's workflow, when the caller knows it (saves a lookup). */
  readonly workflowId?: string;
  readonly event: TaskEvent;
  /**
   * Checked on the locked row before the machine decides; false means the caller's view is
   * stale (a lost lease, an already-settled sweep) and nothing is written for this request.
   */
  readonly precondition?: (task: TaskRecord, now: Date) => boolean;
  /**
   * The writer's lease: like a precondition that the task still holds it (`holdsLease`), but
   * one the one-statement settle can check in SQL too.
   */
  readonly fence?: LeaseFence;
  /**
   * What goes with the edge: the step's output, the receipt to wait for, and a send request
   * for the outbox, written in the same transaction as the edge (R22).
   */
  readonly extra?: {
    readonly outputJson?: string;
    readonly receipt?: { id: string; timeoutMs: number };
    readonly outbox?: {
      readonly id: string;
      readonly channel: string;
      readonly payloadJson: string;
    };
  };
}

/** A workflow-wide cancel, applied to every task that can still be stopped. */
export interface WorkflowCancelRequest {
  readonly workflowId: string;
  readonly actor: Actor;
  readonly reason?: string | undefined;
}

export type EventOutcome =
  | {
      readonly kind: 'applied';
      readonly taskId: string;
      readonly edge: TaskEdge;
      readonly task: TaskRecord;
    }
  | {
      readonly kind: 'refused';
      readonly taskId: string;
      readonly refusal: Refusal;
      readonly task: TaskRecord;
    }
  | { readonly kind: 'stale'; readonly taskId: string; readonly task: TaskRecord | undefined }
  | { readonly kind: 'skipped'; readonly taskId: string }
  /** The task's workflow is not defined in this engine (another version's); nothing written. */
  | { readonly kind: 'undefined_workflow'; readonly taskId: string; readonly name: string };

export interface ApplyResult {
  readonly outcomes: readonly EventOutcome[];
  readonly workflowCancels: readonly {
    workflowId: string;
    edges: number;
    state: WorkflowState | undefined;
  }[];
  /** Every row appended to the log, in order. */
  readonly transitions: readonly NewTransitionRow[];
  /** The locked workflows and all their tasks as they are after the writes. */
  readonly workflows: ReadonlyMap<string, WorkflowRecord>;
  readonly tasks: ReadonlyMap<string, TaskRecord>;
  /** Database time of the transaction. */
  readonly now: Date;
}

export interface ApplyContext {
  readonly definitions: ReadonlyMap<string, WorkflowDefinition>;
  readonly leaseMs: number;
  readonly random: () => number;
}

export interface ApplyOptions {
  readonly skipLocked?: boolean;
  readonly workflowCancels?: readonly WorkflowCancelRequest[];
  /** Workflow ids already known, saving a lookup. */
  readonly workflowIdOf?: ReadonlyMap<string, string>;
  /** Lease holder written by claims. */
  readonly holder?: string;
}

/**
 * The one path by which the engine changes task state: lock the workflows (id order) and
 * their tasks, let the pure machine decide each event in order (`applyTaskEvent`), then write
 * the changed tasks, the changed parents and every transition row in the same transaction.
 * With `skipLocked`, workflows held by another transaction are skipped, not awaited.
 */
export async function applyEvents(
  tx: Transaction<CausewayDatabase>,
  context: ApplyContext,
  requests: readonly EventRequest[],
  options: ApplyOptions = {},
): Promise<ApplyResult> {
  const known = requests.every((request) => request.workflowId !== undefined);
  const workflowIdOf =
    options.workflowIdOf ??
    (known
      ? new Map(requests.map((request) => [request.taskId, request.workflowId as string]))
      : await taskWorkflowIds(
          tx,
          requests.map((request) => request.taskId),
        ));
  const workflowIds = new Set<string>([...workflowIdOf.values()]);
  for (const cancel of options.workflowCancels ?? []) workflowIds.add(cancel.workflowId);
  const loaded = await workflowLockWithTasks(tx, [...workflowIds], {
    skipLocked: options.skipLocked ?? false,
  });
  return decideAndWrite(tx, context, loaded, requests, options);
}

/**
 * A claim (R8) in two statements: read and lock ready tasks with their workflows
 * (`taskClaimLoad`), then the machine's `claim` edges for each, written in one statement.
 * Tasks whose deadline passed are finalized instead (R28).
 */
export async function claimTasks(
  tx: Transaction<CausewayDatabase>,
  context: ApplyContext,
  claim: { readonly queue: string; readonly limit: number; readonly holder: string },
): Promise<ApplyResult & { readonly skipped: number }> {
  const loaded = await taskClaimLoad(
    tx,
    claim.queue,
    claim.limit,
    stepTableOf(context.definitions).stepKeys,
  );
  const actor = { kind: 'worker', name: claim.holder } as const;
  const requests = loaded.candidateIds.map((taskId) => ({
    taskId,
    event: { type: 'claim', actor } satisfies TaskEvent,
  }));
  const result = await decideAndWrite(tx, context, loaded, requests, { holder: claim.holder });
  return { ...result, skipped: loaded.skipped };
}

async function decideAndWrite(
  tx: Transaction<CausewayDatabase>,
  context: ApplyContext,
  loaded: LoadedRuns,
  requests: readonly EventRequest[],
  options: ApplyOptions,
): Promise<ApplyResult> {
  const { workflows, tasks, now } = loaded;
  const state = new RunState(context, workflows, tasks, now);
  const outcomes: EventOutcome[] = [];
  for (const request of requests) outcomes.push(state.apply(request, options.holder));
  const workflowCancels = (options.workflowCancels ?? []).map((cancel) =>
    state.cancelWorkflow(cancel),
  );
  const writes = state.taskWrites();
  if (writes.length > 0 || state.transitions.length > 0) {
    const written = await runChangesWrite(
      tx,
      {
        tasks: writes,
        workflows: state.workflowChanges(),
        transitions: state.transitions,
        wakeQueues: [...state.queuesToWake()],
        outbox: state.outbox,
      },
      now,
    );
    const workflowChanges = state.workflowChanges().length;
    if (written.tasks !== writes.length || written.workflows !== workflowChanges) {
      // Cannot happen while every writer holds the locks; refuse to half-apply if it does.
      throw new Error(
        `conditional update matched ${written.tasks} of ${writes.length} tasks and ${written.workflows} of ${workflowChanges} workflows`,
      );
    }
  }
  return {
    outcomes,
    workflowCancels,
    transitions: state.transitions,
    workflows: new Map(workflows.map((workflow) => [workflow.id, workflow])),
    tasks: state.currentTasks(),
    now,
  };
}

/** The locked workflows and their tasks while events are applied in memory. */
class RunState {
  readonly transitions: NewTransitionRow[] = [];
  private readonly workflows = new Map<string, { record: WorkflowRecord; run: WorkflowRun }>();
  private readonly tasks = new Map<string, TaskRecord>();
  private readonly original = new Map<string, TaskRecord>();
  private readonly changedTaskIds = new Set<string>();
  private readonly outputJsonById = new Map<string, string>();
  private readonly wake = new Set<string>();
  /** Send requests of edges into awaiting_receipt (R22). */
  readonly outbox: NewOutboxRow[] = [];
  /** Locked workflows whose definition this engine does not have, by id. */
  readonly undefinedNames = new Map<string, string>();

  constructor(
    private readonly context: ApplyContext,
    workflows: readonly WorkflowRecord[],
    tasks: readonly TaskRecord[],
    private readonly now: Date,
  ) {
    for (const task of tasks) {
      this.tasks.set(task.id, task);
      this.original.set(task.id, task);
    }
    for (const record of workflows) {
      const definition = this.context.definitions.get(record.name);
      if (definition === undefined) {
        // Another version of the service defines it (a rolling deploy): leave it alone.
        this.undefinedNames.set(record.id, record.name);
        continue;
      }
      // Definition order, so edges of one decision are logged in step order.
      const order = new Map(definition.steps.map((step, index) => [step.name, index]));
      const runTasks: RunTask[] = tasks
        .filter((task) => task.workflowId === record.id)
        .sort((a, b) => (order.get(a.step) ?? 0) - (order.get(b.step) ?? 0))
        .map((task) => ({ taskId: task.id, step: task.step, snapshot: snapshotOf(task) }));
      this.workflows.set(record.id, {
        record,
        run: { workflowId: record.id, state: record.state, tasks: runTasks },
      });
    }
  }

  apply(request: EventRequest, holder: string | undefined): EventOutcome {
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
    const decision = applyTaskEvent(definition, entry.run, task.id, request.event, {
      now: this.now,
      random: this.context.random,
    });
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

  private definitionOf(record: WorkflowRecord): WorkflowDefinition {
    const definition = this.context.definitions.get(record.name);
    if (definition === undefined) {
      throw new Error(
        `workflow ${record.id} is a "${record.name}", which this engine does not define`,
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
      const send = isCause ? cause.request.extra?.outbox : undefined;
      if (send !== undefined && row.edge.to === 'awaiting_receipt') {
        this.outbox.push({ ...send, taskId: row.taskId, workflowId: run.workflowId });
      }
      this.tasks.set(
        row.taskId,
        this.nextRecord(before, row.edge, snapshot, isCause ? cause : null),
      );
      this.changedTaskIds.add(row.taskId);
      this.transitions.push({
        ...logRowOf(run.workflowId, row),
        detail: withReceipt(row.edge, isCause ? cause.request.extra : undefined),
      });
      if (row.edge.to === 'queued' && (snapshot.runAt === null || snapshot.runAt <= this.now)) {
        this.wake.add(before.queue);
      }
    }
  }

  /** The stored row after an edge: the machine's snapshot plus lease and result columns. */
  private nextRecord(
    before: TaskRecord,
    edge: TaskEdge,
    snapshot: RunTask['snapshot'],
    cause: { request: EventRequest; holder: string | undefined } | null,
  ): TaskRecord {
    const holdsLease = (state: TaskState) => state === 'leased' || state === 'cancel_requested';
    const claimed = edge.reason === 'lease_acquired';
    const receipt = cause?.request.extra?.receipt;
    const awaiting = edge.to === 'awaiting_receipt';
    const outputJson = cause?.request.extra?.outputJson;
    return {
      ...before,
      // As the row is after the write (runChangesWrite sets both).
      output: outputJson === undefined ? before.output : JSON.parse(outputJson),
      updatedAt: this.now,
      state: snapshot.state,
      attempt: snapshot.attempt,
      effectStarted: snapshot.effectStarted,
      replayCount: snapshot.replayCount,
      runAt: snapshot.runAt,
      deadlineAt: snapshot.deadlineAt,
      lastErrorCategory: snapshot.lastErrorCategory,
      lastError: snapshot.lastError,
      leaseHolder: claimed
        ? (cause?.holder ?? null)
        : holdsLease(snapshot.state)
          ? before.leaseHolder
          : null,
      leaseEpoch: claimed ? before.leaseEpoch + 1 : before.leaseEpoch,
      leaseExpiresAt: claimed
        ? new Date(this.now.getTime() + this.context.leaseMs)
        : holdsLease(snapshot.state)
          ? before.leaseExpiresAt
          : null,
      receiptId:
        awaiting && receipt !== undefined ? receipt.id : awaiting ? before.receiptId : null,
      receiptDeadlineAt:
        awaiting && receipt !== undefined
          ? new Date(this.now.getTime() + receipt.timeoutMs)
          : awaiting
            ? before.receiptDeadlineAt
            : null,
    };
  }
}

/** The receipt an edge into `awaiting_receipt` waits for (and the outbox channel), in its detail. */
function withReceipt(
  edge: TaskEdge,
  extra: EventRequest['extra'] | undefined,
): Readonly<Record<string, unknown>> | null {
  if (edge.to !== 'awaiting_receipt' || extra?.receipt === undefined) return edge.detail;
  return {
    ...edge.detail,
    receiptId: extra.receipt.id,
    ...(extra.outbox === undefined ? {} : { outboxChannel: extra.outbox.channel }),
  };
}
