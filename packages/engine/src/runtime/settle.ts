import {
  deriveCompleteOutcomes,
  formatActor,
  type ReasonCode,
  type TaskState,
  taskStates,
  type WorkflowDefinition,
} from '@causeway/workflow';
import type { Transaction } from 'kysely';
import type { CausewayDatabase } from '../db/schema';
import { type FastCompletePlan, taskCompleteFast } from '../db/store';
import {
  type ApplyContext,
  applyEvents,
  type EventOutcome,
  type EventRequest,
} from './apply-events';

/** The complete edges, promotion and aggregation as data, read off the machine once. */
const outcomes = deriveCompleteOutcomes();

/** Per set of definitions: every step with its direct upstream steps and its order. */
const stepTables = new WeakMap<
  ReadonlyMap<string, WorkflowDefinition>,
  Pick<FastCompletePlan, 'stepNames' | 'stepSteps' | 'stepAfter' | 'stepOrder'>
>();

function stepTableOf(definitions: ReadonlyMap<string, WorkflowDefinition>) {
  let table = stepTables.get(definitions);
  if (table === undefined) {
    const steps = [...definitions.values()].flatMap((definition) =>
      definition.steps.map((step, order) => ({ name: definition.name, step, order })),
    );
    table = {
      stepNames: steps.map((entry) => entry.name),
      stepSteps: steps.map((entry) => entry.step.name),
      stepAfter: steps.map((entry) => JSON.stringify(entry.step.after)),
      stepOrder: steps.map((entry) => entry.order),
    };
    stepTables.set(definitions, table);
  }
  return table;
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
    extraKeys.every((key) => key === 'outputJson')
  );
}

/**
 * Writes step results in the caller's transaction (the settler's). Plain `complete` results
 * go through one statement whose edges come from the machine as data (`taskCompleteFast`);
 * whatever it does not decide (a lost lease, a second result for one workflow, any other
 * event) is decided in full by the machine (`applyEvents`) right after, in the same
 * transaction. Outcomes come back in request order, with how many the one statement wrote.
 */
export async function settleEvents(
  tx: Transaction<CausewayDatabase>,
  context: ApplyContext,
  requests: readonly EventRequest[],
): Promise<{ readonly outcomes: readonly EventOutcome[]; readonly inOneStatement: number }> {
  // Every workflow of the batch must be known up front: the statement locks them all first.
  const known = requests.every((request) => request.workflowId !== undefined);
  const plain = outcomes === null || !known ? [] : requests.filter(isPlainComplete);
  const holder = plain[0]?.fence?.holder;
  const fast = plain.filter((request) => request.fence?.holder === holder);
  if (outcomes === null || fast.length === 0 || holder === undefined) {
    return { outcomes: (await applyEvents(tx, context, requests)).outcomes, inOneStatement: 0 };
  }
  const written = await taskCompleteFast(tx, {
    taskIds: fast.map((request) => request.taskId),
    workflowIds: fast.map((request) => request.workflowId as string),
    epochs: fast.map((request) => request.fence?.epoch as number),
    outputs: fast.map((request) => request.extra?.outputJson ?? null),
    batchWorkflowIds: requests.flatMap((request) =>
      request.workflowId === undefined ? [] : [request.workflowId],
    ),
    holder,
    actor: formatActor({ kind: 'worker', name: holder }),
    completeFrom: outcomes.completeEdges.map((edge) => edge.from),
    completeTo: outcomes.completeEdges.map((edge) => edge.to),
    completeReason: outcomes.completeEdges.map((edge) => edge.reason),
    promoteTo: outcomes.promote.to,
    promoteReason: outcomes.promote.reason,
    promoteActor: outcomes.promote.actor,
    stateOrder: [...taskStates],
    presenceMasks: [...outcomes.parentByPresence.keys()],
    presenceStates: [...outcomes.parentByPresence.values()],
    ...stepTableOf(context.definitions),
  });
  const decided = new Map<EventRequest, EventOutcome>();
  for (const row of written.completed) {
    const request = fast[row.position - 1] as EventRequest;
    decided.set(request, {
      kind: 'applied',
      taskId: request.taskId,
      task: row.task,
      edge: {
        from: row.from as TaskState,
        to: row.to as TaskState,
        reason: row.reason as ReasonCode,
        actor: formatActor({ kind: 'worker', name: holder }),
        errorCategory: null,
        errorSummary: null,
        attempt: row.task.attempt,
        detail: null,
      },
    });
  }
  const rest = requests.filter((request) => !decided.has(request));
  const full = rest.length === 0 ? [] : (await applyEvents(tx, context, rest)).outcomes;
  const fullOutcome = new Map(rest.map((request, index) => [request, full[index]]));
  return {
    outcomes: requests.map(
      (request) => (decided.get(request) ?? fullOutcome.get(request)) as EventOutcome,
    ),
    inOneStatement: decided.size,
  };
}
