import {
  formatActor,
  type ReasonCode,
  type TaskEdge,
  type TaskState,
} from '@causeway/workflow/internal';
import type { Db } from '../../db/database';
import { taskSettleInOneStatement } from '../../db/settle/settle-statement';
import type { ClaimedTask } from '../claim/claimed-task';
import { claimedFromStatement } from '../claim/claimed-task';
import type { ApplyContext, EventOutcome, EventRequest } from '../decision/event-request';
import { oneStatementPaths } from '../one-statement-paths';
import { stepTableOf } from '../step-table';

/**
 * How many of the steps a batch of results makes ready its writer takes at once, per queue:
 * they are leased to it in the settle statement itself (pending → queued → leased) instead of
 * waiting in the queue for its next claim.
 */
export type ChainCapacity = ReadonlyMap<string, number>;

const noChain: ChainCapacity = new Map();

/** What a batch of results came to: outcomes by request, and the steps leased to the writer. */
export interface SettledBatch<Outcome> {
  readonly decided: ReadonlyMap<EventRequest, Outcome>;
  readonly chained: readonly ClaimedTask[];
}

/**
 * A plain `complete` result of the writer's own lease: the case the one statement covers. A
 * request with its own precondition, a receipt or an outbox row goes to the full decision.
 */
function isPlainComplete(request: EventRequest): boolean {
  const extraKeys = Object.keys(request.extra ?? {});
  return (
    request.event.type === 'complete' &&
    request.fence !== undefined &&
    request.workflowId !== undefined &&
    request.precondition === undefined &&
    request.decideInFull !== true &&
    extraKeys.every((key) => key === 'outputJson')
  );
}

/** What a result came to, as the worker that reported it needs it: the edge, or why not. */
export type ResultOutcome =
  | { readonly kind: 'applied'; readonly taskId: string; readonly edge: TaskEdge }
  | Exclude<EventOutcome, { readonly kind: 'applied' }>;

/**
 * `settleInOneStatement` for the worker's resultWriter: the same statement, answering with edges
 * only (no task rows to send and parse).
 */
export function writeResultsInOneStatement(
  db: Db,
  context: ApplyContext,
  requests: readonly EventRequest[],
  capacity: ChainCapacity = noChain,
): Promise<SettledBatch<ResultOutcome>> {
  return settleCompleteResults(db, context, requests, capacity, false);
}

/**
 * The plain `complete` results of a batch that one statement can write (`taskSettleInOneStatement`),
 * with their edges read off the machine as data: written and returned with their outcomes.
 * Given a Kysely instance rather than a transaction, the statement commits on its own; it is
 * atomic either way, and it fails as a whole if it wrote other than it decided. Whatever it
 * does not decide (a lost lease, a second result for one workflow, any other event) is left
 * untouched for the full decision.
 */
export function settleInOneStatement(
  db: Db,
  context: ApplyContext,
  requests: readonly EventRequest[],
  capacity: ChainCapacity = noChain,
): Promise<SettledBatch<EventOutcome>> {
  return settleCompleteResults(db, context, requests, capacity, true);
}

function settleCompleteResults(
  db: Db,
  context: ApplyContext,
  requests: readonly EventRequest[],
  capacity: ChainCapacity,
  withTasks: true,
): Promise<SettledBatch<EventOutcome>>;
function settleCompleteResults(
  db: Db,
  context: ApplyContext,
  requests: readonly EventRequest[],
  capacity: ChainCapacity,
  withTasks: false,
): Promise<SettledBatch<ResultOutcome>>;
async function settleCompleteResults(
  db: Db,
  context: ApplyContext,
  requests: readonly EventRequest[],
  capacity: ChainCapacity,
  withTasks: boolean,
): Promise<SettledBatch<EventOutcome | ResultOutcome>> {
  const decided = new Map<EventRequest, EventOutcome | ResultOutcome>();
  // Every workflow of the batch must be known up front: the statement locks them all first.
  const known = requests.every((request) => request.workflowId !== undefined);
  const plain = known ? requests.filter(isPlainComplete) : [];
  const holder = plain[0]?.fence?.holder;
  if (holder === undefined) return { decided, chained: [] };
  // A workflow with two requests in the batch is left to the full decision, which applies
  // them in request order. Filtered here, not in the statement: there the filter's row
  // estimate (one row) can make a custom plan re-scan the locked batch once per result.
  const requestsOf = new Map<string, number>();
  for (const request of requests) {
    const workflowId = request.workflowId as string; // every request has one (`known`)
    requestsOf.set(workflowId, (requestsOf.get(workflowId) ?? 0) + 1);
  }
  const inOne = plain.filter(
    (request) =>
      request.fence?.holder === holder && requestsOf.get(request.workflowId as string) === 1,
  );
  if (inOne.length === 0) return { decided, chained: [] };
  const actor = formatActor({ kind: 'worker', name: holder });
  const steps = stepTableOf(context.definitions);
  const paths = oneStatementPaths();
  const chainQueues = [...capacity].filter(([, most]) => most > 0);
  const written = await taskSettleInOneStatement(
    db,
    {
      taskIds: inOne.map((request) => request.taskId),
      workflowIds: inOne.map((request) => request.workflowId as string),
      epochs: inOne.map((request) => request.fence?.epoch as number),
      outputs: inOne.map((request) => request.extra?.outputJson ?? null),
      batchWorkflowIds: [...requestsOf.keys()],
      holder,
      actor,
      ...paths.settle,
      stepNames: steps.stepNames,
      stepVersions: steps.stepVersions,
      stepLatest: steps.stepLatest,
      stepSteps: steps.stepSteps,
      stepAfter: steps.stepAfter,
      stepUpstream: steps.stepUpstream,
      stepOrder: steps.stepOrder,
      chain: {
        ...paths.claim,
        queues: chainQueues.map(([queue]) => queue),
        limits: chainQueues.map(([, most]) => most),
        leaseMs: context.leaseMs,
      },
    },
    {
      withTasks,
      // The parts for child workflows' ends only when a result may end one (R45).
      children: inOne.some((request) => request.awaitedChild !== false),
    },
  );
  for (const row of written.completed) {
    const request = inOne[row.position - 1] as EventRequest;
    decided.set(request, {
      kind: 'applied',
      taskId: request.taskId,
      ...(row.task === null ? {} : { task: row.task }),
      edge: {
        from: row.from as TaskState,
        to: row.to as TaskState,
        reason: row.reason as ReasonCode,
        actor,
        errorCategory: null,
        errorSummary: null,
        attempt: row.attempt,
        detail: null,
      },
    });
  }
  const chained = written.chained.map((row) => claimedFromStatement(context, row, written.now));
  return { decided, chained };
}
