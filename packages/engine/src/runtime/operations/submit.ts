import {
  admitAttributes,
  checkAdmission,
  claimRule,
  createWorkflowRun,
  getStep,
  priorityProblem,
  submitDelayProblem,
  type WorkflowRegistry,
  type WorkflowState,
  workflowVersion,
} from '@causeway/workflow/internal';
import type { Kysely, Transaction } from 'kysely';
import type { Db } from '../../db/database';
import type { CausewayDatabase } from '../../db/schema';
import {
  queueBacklog,
  queueLockAdmission,
  workflowFindByKey,
} from '../../db/submission/admission-queries';
import {
  type SubmissionInsertStatement,
  submissionInsert,
} from '../../db/submission/submission-insert';
import { EngineError } from '../../errors';
import { newId } from '../../ids';
import type { Logger } from '../../logger';
import { applyEvents } from '../decision/apply-events';
import type { ApplyContext } from '../decision/event-request';
import { logRowOf } from '../decision/log-rows';
import type { WaitEvent } from '../decision/wait-event';
import { rowsWithOrigin, type SubmitOrigin } from '../schedules/submit-origin';
import { workflowStepsText } from '../step-table';
import { transactionRecordingWaits } from '../tracing/committed-wait-spans';
import { activeTraceCarrier } from '../tracing/trace-context';
import { debounceLockKeys, debounceSupersede } from './debounce';
import type { Prepared } from './prepared';
import type { Plan } from './submission-plan';
import { cappedDeadline, rootRunAt } from './submission-times';
import { abortedError, admissionRefused, runAtRefused } from './submit-errors';
import { completeSubmittedWaits, rootWaitEvent, waitLogged } from './submitted-waits';

export interface SubmitRequest {
  readonly name: string;
  readonly input: unknown;
  readonly idempotencyKey?: string;
}

export interface SubmitResult {
  readonly workflow: { readonly id: string; readonly state: WorkflowState };
  /** True when an earlier submit with the same key already created this workflow (R2). */
  readonly deduplicated: boolean;
  /**
   * A debounced workflow's (R52): the ids of the workflows it superseded (oldest burst first,
   * usually one; none when its key had no unstarted workflow), and when it is due.
   */
  readonly debounce?: { readonly superseded: readonly string[]; readonly dueAt: Date };
}

export interface SubmitOptions {
  /** The caller's transaction: the workflows are accepted iff it commits. */
  // biome-ignore lint/suspicious/noExplicitAny: the caller's database type is theirs, not ours.
  readonly transaction?: Transaction<any>;
  /** Matters only until the insert commits (R6). */
  readonly signal?: AbortSignal;
  /** Run the first steps this long after acceptance (R36)… */
  readonly delayMs?: number;
  /** …or at this time (not both); each step's own `delayMs` comes on top. */
  readonly runAt?: Date;
  /** Seconds of backlog every task of these workflows may jump (R49); wins over the steps'. */
  readonly priority?: number;
  /** Searchable attributes of every workflow of the submit (R55), merged with the definition's. */
  readonly attributes?: Readonly<Record<string, string | number | boolean>>;
}

export interface SubmitContext {
  readonly db: Kysely<CausewayDatabase>;
  readonly definitions: WorkflowRegistry;
  readonly queueLimits: ReadonlyMap<string, { readonly maxBacklog?: number }>;
  /** For first steps that wait for an event already stored (R37). */
  readonly apply: ApplyContext;
  /** Where a failed read of the trace contexts of those waits is told (R57). */
  readonly logger?: Logger;
}

/**
 * Admits a batch atomically: every request is checked before anything is written (R34);
 * then one statement inserts the workflows, their tasks and `submitted` transitions and
 * wakes the workers. A request whose (name, key) exists returns that workflow (R2).
 * `origins` (internal, never from a caller): who submitted each request instead of the client.
 */
export async function submitMany(
  context: SubmitContext,
  requests: readonly SubmitRequest[],
  options: SubmitOptions = {},
  origins: readonly (SubmitOrigin | undefined)[] = [],
): Promise<SubmitResult[]> {
  const traceContext = activeTraceCarrier(); // R57: the caller's span, if one is active
  const prepared = requests.map((request, index) => ({
    ...prepare(context, request, requests.length > 1 ? index : null, options.attributes),
    origin: origins[index],
    traceContext,
  }));
  // How far runAt lies from now is checked by the insert, on the database's clock (R11).
  const delayProblem = submitDelayProblem(options);
  if (delayProblem !== null) throw new EngineError('invalid_delay', delayProblem);
  const priorityRefused = options.priority === undefined ? null : priorityProblem(options.priority);
  if (priorityRefused !== null) throw new EngineError('invalid_priority', priorityRefused);
  if (options.signal?.aborted) throw abortedError();
  const plan = planSubmission(prepared, {
    delayMs: options.delayMs ?? 0,
    runAt: options.runAt ?? null,
    priority: options.priority ?? null,
  });
  const capped = [...plan.queues]
    .filter((queue) => context.queueLimits.get(queue)?.maxBacklog !== undefined)
    .sort();
  const run = (db: Db) => insertPlan(db, context, plan, capped, options.signal);
  if (options.transaction !== undefined) {
    return run(options.transaction as unknown as Transaction<CausewayDatabase>);
  }
  // One statement is atomic by itself; a transaction is needed only to check a cap or a
  // caller's signal before the commit, or to look for events a first step waits for.
  if (
    capped.length === 0 &&
    options.signal === undefined &&
    plan.waits.length === 0 &&
    plan.mapRoots.length === 0 &&
    plan.debounced.length === 0
  ) {
    return run(context.db);
  }
  return transactionRecordingWaits(context, run);
}

function prepare(
  context: SubmitContext,
  request: SubmitRequest,
  index: number | null,
  attributes: unknown,
): Prepared {
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
  if (!admission.ok) throw admissionRefused(admission.error, index);
  const attributed = admitAttributes(definition, admission.input, { caller: attributes });
  if (!attributed.ok) throw admissionRefused(attributed.error, index);
  return {
    definition,
    input: admission.input,
    inputJson: admission.inputJson,
    idempotencyKey: admission.idempotencyKey,
    debounceKey: admission.debounceKey,
    concurrency: admission.concurrency,
    rate: admission.rate,
    attributes: attributed.attributes,
  };
}

/**
 * The pure machine plans each workflow (`createWorkflowRun`). It is given time zero, so its
 * run_at and deadlines come out as offsets that the statement adds to database time.
 */
export function planSubmission(
  prepared: readonly Prepared[],
  start: {
    readonly delayMs: number;
    readonly runAt: Date | null;
    /** The submit's priority (R49), or null for each step's own. */
    readonly priority?: number | null;
  },
): Plan {
  const plan: Plan = {
    workflows: [],
    tasks: [],
    transitions: [],
    requestIds: [],
    queues: new Set(),
    waits: [],
    runAtMs: start.runAt?.getTime() ?? null,
    mapRoots: [],
    debounced: [],
  };
  const firstIdOfKey = new Map<string, string>();
  const zero = new Date(0);
  for (const item of prepared) {
    const keyId =
      item.idempotencyKey === null ? null : `${item.definition.name}\u0000${item.idempotencyKey}`;
    const earlier = keyId === null ? undefined : firstIdOfKey.get(keyId);
    if (earlier !== undefined) {
      plan.requestIds.push(earlier);
      continue;
    }
    const workflowId = item.child?.id ?? newId();
    if (keyId !== null) firstIdOfKey.set(keyId, workflowId);
    plan.requestIds.push(workflowId);
    const { debounce } = item.definition;
    if (debounce !== null && item.child === undefined && typeof item.debounceKey === 'string') {
      plan.debounced.push({
        workflowId,
        name: item.definition.name,
        key: item.debounceKey,
        quietMs: debounce.quietMs,
        maxWaitMs: debounce.maxWaitMs ?? null,
      });
    }
    const taskIds = item.definition.steps.map(() => newId());
    // A first event step's key, from the input alone; a failing one ends the step (R58).
    const rootWaits = new Map<string, WaitEvent>();
    const created = createWorkflowRun(
      item.definition,
      { workflowId, taskIds },
      zero,
      start.delayMs,
      (root) => {
        const found = rootWaitEvent(item, getStep(item.definition, root.step), workflowId);
        if (!found.ok) return found.problem;
        rootWaits.set(root.taskId, found.event);
        return null;
      },
    );
    plan.workflows.push({
      id: workflowId,
      name: item.definition.name,
      state: created.run.state,
      inputJson: item.inputJson,
      idempotencyKey: item.idempotencyKey,
      steps: workflowStepsText(item.definition),
      traceContext: item.traceContext ?? null,
      version: workflowVersion(item.definition),
      ...(item.child === undefined ? {} : { parent: item.child.link }),
      ...(item.attributes ? { attributes: item.attributes } : {}),
    });
    const waits = new Map<string, { event: WaitEvent; timeoutMs: number }>();
    created.run.tasks.forEach((task, index) => {
      const step = item.definition.steps[index];
      if (step === undefined) return;
      const runInMs = task.snapshot.runAt?.getTime() ?? null;
      if (runInMs !== null) plan.queues.add(step.queue);
      // The machine counted from time zero: a wait's timeout is its duration.
      const timeoutMs = task.snapshot.waitTimeoutAt?.getTime() ?? null;
      const waitEvent = rootWaits.get(task.taskId) ?? null;
      if (step.policy.map && step.after.length === 0) {
        plan.mapRoots.push({ taskId: task.taskId, workflowId });
      }
      if (waitEvent !== null) {
        waits.set(task.taskId, { event: waitEvent, timeoutMs: timeoutMs ?? 0 });
        plan.waits.push({
          taskId: task.taskId,
          workflowId,
          workflowName: item.definition.name,
          workflowVersion: workflowVersion(item.definition),
          step: step.name,
          name: waitEvent.name,
          key: waitEvent.key,
        });
      }
      plan.tasks.push({
        id: task.taskId,
        workflowId,
        step: task.step,
        queue: step.queue,
        state: task.snapshot.state,
        maxAttempts: step.policy.maxAttempts,
        priority: start.priority ?? step.priority ?? 0,
        concurrency: item.concurrency?.[index] ?? null,
        rate: item.rate?.[index] ?? null,
        runInMs,
        runFrom: runInMs === null ? null : start.runAt,
        deadlineInMs: cappedDeadline(task.snapshot.deadlineAt?.getTime() ?? null, item),
        lastError:
          task.snapshot.lastError === null
            ? null
            : { category: task.snapshot.lastErrorCategory, summary: task.snapshot.lastError },
        wait:
          waitEvent === null
            ? null
            : {
                eventName: waitEvent.name,
                eventKey: waitEvent.key,
                timeoutMs: timeoutMs ?? 0,
              },
      });
    });
    const rows = created.transitions.map((row) => {
      const logged = waitLogged(logRowOf(workflowId, row), row, waits);
      // The machine counted from time zero: a root's edge says when it runs, from `runAt`.
      return start.runAt === null || row.kind !== 'task' || row.edge.to !== claimRule.from
        ? logged
        : { ...logged, detail: { ...logged.detail, runAt: rootRunAt(start.runAt, logged.detail) } };
    });
    plan.transitions.push(...rowsWithOrigin(rows, item.origin));
  }
  return plan;
}

export async function insertPlan(
  db: Db,
  context: SubmitContext,
  plan: Plan,
  capped: readonly string[],
  signal: AbortSignal | undefined,
  /** The plan's insert, when it was built ahead. */
  insert?: SubmissionInsertStatement,
): Promise<SubmitResult[]> {
  const tx = db as Transaction<CausewayDatabase>;
  // The admission lock taken before the insert makes the cap exact under concurrent submits.
  for (const queue of capped) await queueLockAdmission(tx, queue);
  if (plan.debounced.length > 0) await debounceLockKeys(tx, plan.debounced);
  const { skipped, refusedAtMs } = await submissionInsert(db, plan, insert);
  if (refusedAtMs !== null) throw runAtRefused(plan.runAtMs as number, refusedAtMs);
  await refuseOverfullQueues(db, context, capped);
  await completeSubmittedWaits(
    tx,
    context.apply,
    plan.waits.filter((wait) => !skipped.has(wait.workflowId)),
  );
  const mapRoots = plan.mapRoots.filter((root) => !skipped.has(root.workflowId));
  if (mapRoots.length > 0) {
    await applyEvents(
      tx,
      context.apply,
      mapRoots.map((root) => ({ ...root, event: { type: 'promote' } })),
    );
  }
  // In plan order: a later submit of a key in the same batch supersedes the earlier one.
  const debounced = new Map<string, NonNullable<SubmitResult['debounce']>>();
  for (const item of plan.debounced) {
    if (!skipped.has(item.workflowId)) {
      debounced.set(item.workflowId, await debounceSupersede(tx, context.apply, item));
    }
  }
  const supersededHere = new Set([...debounced.values()].flatMap((item) => item.superseded));
  const answers = new Map<string, SubmitResult>();
  for (const workflow of plan.workflows) {
    if (!skipped.has(workflow.id)) {
      const debounce = debounced.get(workflow.id);
      const state = supersededHere.has(workflow.id) ? 'cancelled' : workflow.state;
      answers.set(workflow.id, {
        workflow: { id: workflow.id, state: state as WorkflowState },
        deduplicated: false,
        ...(debounce === undefined ? {} : { debounce }),
      });
      continue;
    }
    // ON CONFLICT waited for the other submit to commit, so the existing row is visible now.
    const existing = await workflowFindByKey(db, workflow.name, workflow.idempotencyKey as string);
    if (existing === undefined) {
      throw new Error(`workflow with key ${workflow.idempotencyKey} vanished`);
    }
    answers.set(workflow.id, {
      workflow: { id: existing.id, state: existing.state },
      deduplicated: true,
    });
  }
  if (signal?.aborted) throw abortedError();
  const seen = new Set<string>();
  return plan.requestIds.map((id) => {
    const answer = answers.get(id) as SubmitResult;
    // A repeat of a key within the batch is a deduplicated answer too.
    const repeat = seen.has(id);
    seen.add(id);
    return repeat ? { ...answer, deduplicated: true } : answer;
  });
}

/**
 * Refuses at the door when a capped queue's ready backlog is over its cap once this batch is
 * in: the whole transaction rolls back, so nothing is written.
 */
async function refuseOverfullQueues(
  db: Db,
  context: SubmitContext,
  queues: readonly string[],
): Promise<void> {
  for (const queue of queues) {
    const maxBacklog = context.queueLimits.get(queue)?.maxBacklog as number;
    const backlog = await queueBacklog(db, queue);
    if (backlog > maxBacklog) {
      throw new EngineError(
        'queue_full',
        `queue "${queue}" is full: admitting this submit would bring its ready backlog to ${backlog}, over its cap of ${maxBacklog}`,
        { queue, backlog, maxBacklog },
      );
    }
  }
}
