import type { WorkflowState } from '@causeway/workflow/internal';
import type { Transaction } from 'kysely';
import { type StaleResultRow, staleResultInsert } from '../../db/attempts/stale-result-insert';
import type { LoadedRuns } from '../../db/locked-runs';
import { ratePauseWrite } from '../../db/rate/rate-pause-write';
import { taskWorkflowIds } from '../../db/reads/record-reads';
import type { CausewayDatabase } from '../../db/schema';
import { runChangesWrite } from '../../db/settle/run-changes-write';
import { workflowLockWithTasks } from '../../db/settle/workflow-lock';
import { followChildren } from '../children/child-cascade';
import { type ChildWork, hasChildWork, noChildWork } from './child-effects';
import type {
  ApplyContext,
  ApplyOptions,
  ApplyResult,
  EventOutcome,
  EventRequest,
} from './event-request';
import { holdsLease } from './holds-lease';
import { ratePausesOf } from './rate-pauses';
import { RunState } from './run-state';
import { completeWaitsWithStoredEvents, deliveriesOf } from './stored-events';

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
 * Decides the requests on runs loaded and locked by the caller, and writes the outcome; then,
 * in the same transaction, whatever the edges ask of child workflows (R43–R47). The result is
 * the transaction's: tasks and workflows as it leaves them, every row it appended, so an
 * answer says what the call did, children's consequences included (a cancelled step whose
 * children all stop at once ends `cancelled`, not `cancel_requested`).
 */
export async function decideAndWrite(
  tx: Transaction<CausewayDatabase>,
  context: ApplyContext,
  loaded: LoadedRuns,
  requests: readonly EventRequest[],
  options: ApplyOptions,
): Promise<ApplyResult> {
  const { result, children } = await decideOnce(tx, context, loaded, requests, options);
  if (!hasChildWork(children)) return result;
  const later: ApplyResult[] = [];
  await followChildren(tx, context, children, async (more, asked, moreOptions) => {
    const decided = await decideOnce(tx, context, more, asked, moreOptions);
    later.push(decided.result);
    return decided.children;
  });
  return withLaterDecisions(result, later);
}

/** The first decision's result with what the decisions on its children changed after it. */
function withLaterDecisions(first: ApplyResult, later: readonly ApplyResult[]): ApplyResult {
  const transitions = [first, ...later].flatMap((result) => result.transitions);
  const tasks = new Map(first.tasks);
  for (const result of later) {
    for (const [id, task] of result.tasks) if (tasks.has(id)) tasks.set(id, task);
  }
  const workflowCancels = first.workflowCancels.map((cancel) => {
    const moved = transitions.findLast(
      (row) => row.workflowId === cancel.workflowId && row.taskId === null,
    );
    return moved === undefined ? cancel : { ...cancel, state: moved.to as WorkflowState };
  });
  return { ...first, transitions, tasks, workflowCancels };
}

/**
 * Settles the steps whose tallies decide them (R45) in one transaction: the sweeper's fallback
 * for a step that its last child's edge could not settle, its workflow being one the deciding
 * engine did not define (R54).
 */
export async function settleDecidedSteps(
  tx: Transaction<CausewayDatabase>,
  context: ApplyContext,
  steps: readonly { readonly parentTaskId: string; readonly parentWorkflowId: string }[],
): Promise<void> {
  await followChildren(
    tx,
    context,
    { ...noChildWork, rechecks: steps },
    async (more, asked, options) => {
      const decided = await decideOnce(tx, context, more, asked, options);
      return decided.children;
    },
  );
}

async function decideOnce(
  tx: Transaction<CausewayDatabase>,
  context: ApplyContext,
  loaded: LoadedRuns,
  requests: readonly EventRequest[],
  options: ApplyOptions,
): Promise<{ result: ApplyResult; children: ChildWork }> {
  const { workflows, tasks, now } = loaded;
  const state = new RunState(context, workflows, tasks, now);
  const outcomes: EventOutcome[] = [];
  for (const request of requests) outcomes.push(state.apply(request, options.holder));
  const workflowCancels = (options.workflowCancels ?? []).map((cancel) =>
    state.cancelWorkflow(cancel),
  );
  await completeWaitsWithStoredEvents(tx, state);
  // R56: a late result refused here is the one part of an attempt the log does not hold.
  await staleResultInsert(tx, staleResultsOf(requests, outcomes, now), now);
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
        deliveries: deliveriesOf(state.transitions),
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
    await ratePauseWrite(tx, ratePausesOf(state.transitions, state.currentTasks()), now);
  }
  const result: ApplyResult = {
    outcomes,
    workflowCancels,
    transitions: state.transitions,
    workflows: new Map(workflows.map((workflow) => [workflow.id, workflow])),
    tasks: state.currentTasks(),
    now,
  };
  return { result, children: state.childWork() };
}

/**
 * The workers' results among `requests` refused for a lost lease (R7), to record (R56). A
 * release at shutdown is not a result: it says the attempt started nothing.
 */
function staleResultsOf(
  requests: readonly EventRequest[],
  outcomes: readonly EventOutcome[],
  now: Date,
): StaleResultRow[] {
  return requests.flatMap((request, index) => {
    const outcome = outcomes[index];
    const task = outcome?.kind === 'stale' ? outcome.task : undefined;
    return task === undefined ||
      request.fence === undefined ||
      request.event.type === 'release' ||
      holdsLease(task, request.fence, now)
      ? []
      : [{ fence: request.fence, workflowId: task.workflowId }];
  });
}
