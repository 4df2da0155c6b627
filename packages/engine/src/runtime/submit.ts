import { randomUUID } from 'node:crypto';
import {
  checkAdmission,
  createWorkflowRun,
  type WorkflowDefinition,
  type WorkflowState,
} from '@causeway/workflow';
import type { Kysely, Transaction } from 'kysely';
import type { CausewayDatabase } from '../db/schema';
import {
  databaseNow,
  type NewTaskRow,
  type NewTransitionRow,
  type NewWorkflowRow,
  queueBacklog,
  queueLockAdmission,
  queueNotify,
  taskInsertMany,
  transitionInsertMany,
  workflowFindByKey,
  workflowInsertMany,
} from '../db/store';
import { EngineError } from '../errors';

export interface SubmitRequest {
  readonly name: string;
  readonly input: unknown;
  readonly idempotencyKey?: string;
}

export interface SubmitResult {
  readonly workflow: { readonly id: string; readonly state: WorkflowState };
  /** True when an earlier submit with the same key already created this workflow (R2). */
  readonly deduplicated: boolean;
}

export interface SubmitOptions {
  /** The caller's transaction: the workflows are accepted iff it commits. */
  // biome-ignore lint/suspicious/noExplicitAny: the caller's database type is theirs, not ours.
  readonly transaction?: Transaction<any>;
  /** Matters only until the insert commits (R6). */
  readonly signal?: AbortSignal;
}

export interface SubmitContext {
  readonly db: Kysely<CausewayDatabase>;
  readonly definitions: ReadonlyMap<string, WorkflowDefinition>;
  readonly queueLimits: ReadonlyMap<string, { readonly maxBacklog?: number }>;
}

interface Prepared {
  readonly definition: WorkflowDefinition;
  readonly input: unknown;
  readonly inputJson: string;
  readonly idempotencyKey: string | null;
}

/**
 * Admits a batch atomically: every request is checked before anything is written (R34);
 * then one transaction inserts the workflows, their tasks and `submitted` transitions and
 * wakes the workers. A request whose (name, key) exists returns that workflow (R2).
 */
export async function submitMany(
  context: SubmitContext,
  requests: readonly SubmitRequest[],
  options: SubmitOptions = {},
): Promise<SubmitResult[]> {
  const prepared = requests.map((request, index) =>
    prepare(context, request, requests.length > 1 ? index : null),
  );
  if (options.signal?.aborted) throw abortedError();
  const run = async (tx: Transaction<CausewayDatabase>) => {
    const results = await insertAll(tx, context, prepared);
    if (options.signal?.aborted) throw abortedError();
    return results;
  };
  if (options.transaction !== undefined) {
    return run(options.transaction as unknown as Transaction<CausewayDatabase>);
  }
  return context.db.transaction().execute(run);
}

function prepare(context: SubmitContext, request: SubmitRequest, index: number | null): Prepared {
  const where = index === null ? '' : ` (request ${index})`;
  const definition = context.definitions.get(request.name);
  if (definition === undefined) {
    throw new EngineError(
      'unknown_workflow',
      `no workflow is named ${JSON.stringify(request.name)}${where}`,
      {
        name: request.name,
        ...(index === null ? {} : { index }),
      },
    );
  }
  const admission = checkAdmission(definition, request.input, request.idempotencyKey);
  if (!admission.ok) {
    throw new EngineError(admission.error.code, `${admission.error.message}${where}`, {
      ...(admission.error.path === undefined ? {} : { path: admission.error.path }),
      ...(index === null ? {} : { index }),
    });
  }
  return {
    definition,
    input: admission.input,
    inputJson: JSON.stringify(admission.input) ?? 'null',
    idempotencyKey: admission.idempotencyKey,
  };
}

async function insertAll(
  tx: Transaction<CausewayDatabase>,
  context: SubmitContext,
  prepared: readonly Prepared[],
): Promise<SubmitResult[]> {
  const now = await databaseNow(tx);
  // Within one batch the same (name, key) is one workflow.
  const firstIndexOfKey = new Map<string, number>();
  const workflows: NewWorkflowRow[] = [];
  const tasks: NewTaskRow[] = [];
  const transitions: NewTransitionRow[] = [];
  const plannedIds: string[] = [];
  const plannedState = new Map<string, WorkflowState>();
  const rootQueues = new Map<string, number>();
  prepared.forEach((item, index) => {
    const keyId =
      item.idempotencyKey === null ? null : `${item.definition.name}\u0000${item.idempotencyKey}`;
    const earlier = keyId === null ? undefined : firstIndexOfKey.get(keyId);
    if (earlier !== undefined) {
      plannedIds.push(plannedIds[earlier] as string);
      return;
    }
    if (keyId !== null) firstIndexOfKey.set(keyId, index);
    const workflowId = randomUUID();
    plannedIds.push(workflowId);
    const taskIds = item.definition.steps.map(() => randomUUID());
    const created = createWorkflowRun(item.definition, { workflowId, taskIds }, now);
    plannedState.set(workflowId, created.run.state);
    workflows.push({
      id: workflowId,
      name: item.definition.name,
      state: created.run.state,
      inputJson: item.inputJson,
      idempotencyKey: item.idempotencyKey,
    });
    created.run.tasks.forEach((task, stepIndex) => {
      const step = item.definition.steps[stepIndex];
      if (step === undefined) return;
      tasks.push({
        id: task.taskId,
        workflowId,
        step: task.step,
        queue: step.queue,
        state: task.snapshot.state,
        maxAttempts: step.policy.maxAttempts,
        runAt: task.snapshot.runAt,
        deadlineAt: task.snapshot.deadlineAt,
      });
      if (task.snapshot.state === 'queued')
        rootQueues.set(step.queue, (rootQueues.get(step.queue) ?? 0) + 1);
    });
    for (const row of created.transitions) {
      transitions.push(
        row.kind === 'workflow'
          ? {
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
              detail: null,
            }
          : {
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
            },
      );
    }
  });

  const cappedQueues = [...rootQueues.keys()]
    .filter((queue) => context.queueLimits.get(queue)?.maxBacklog !== undefined)
    .sort();
  for (const queue of cappedQueues) await queueLockAdmission(tx, queue);
  const inserted = await workflowInsertMany(tx, workflows, now);
  const results = new Map<string, SubmitResult>();
  for (const workflow of workflows) {
    if (inserted.has(workflow.id)) {
      results.set(workflow.id, {
        workflow: { id: workflow.id, state: plannedState.get(workflow.id) as WorkflowState },
        deduplicated: false,
      });
      continue;
    }
    // ON CONFLICT waited for the other submit to commit, so the existing row is visible.
    const existing = await workflowFindByKey(tx, workflow.name, workflow.idempotencyKey as string);
    if (existing === undefined)
      throw new Error(`workflow with key ${workflow.idempotencyKey} vanished`);
    results.set(workflow.id, {
      workflow: { id: existing.id, state: existing.state },
      deduplicated: true,
    });
  }
  await taskInsertMany(
    tx,
    tasks.filter((task) => inserted.has(task.workflowId)),
    now,
  );
  await transitionInsertMany(
    tx,
    transitions.filter((row) => inserted.has(row.workflowId)),
    now,
  );
  await refuseOverfullQueues(tx, context, cappedQueues);
  await queueNotify(tx, [...rootQueues.keys()], inserted);
  const seen = new Set<string>();
  return plannedIds.map((id) => {
    const result = results.get(id) as SubmitResult;
    // A repeat of a key within the batch is a deduplicated answer too.
    const repeat = seen.has(id);
    seen.add(id);
    return repeat ? { ...result, deduplicated: true } : result;
  });
}

/**
 * Refuses at the door when a capped queue's ready backlog is over its cap once this batch is
 * in: the whole transaction rolls back, so nothing is written. The admission lock taken
 * before the inserts makes the count exact under concurrent submits.
 */
async function refuseOverfullQueues(
  tx: Transaction<CausewayDatabase>,
  context: SubmitContext,
  queues: readonly string[],
): Promise<void> {
  for (const queue of queues) {
    const maxBacklog = context.queueLimits.get(queue)?.maxBacklog as number;
    const backlog = await queueBacklog(tx, queue);
    if (backlog > maxBacklog) {
      throw new EngineError(
        'queue_full',
        `queue "${queue}" is full: admitting this submit would bring its ready backlog to ${backlog}, over its cap of ${maxBacklog}`,
        { queue, backlog, maxBacklog },
      );
    }
  }
}

function abortedError(): EngineError {
  return new EngineError(
    'aborted',
    'the submit was aborted before it committed; nothing was accepted',
  );
}
