import { deepFreeze, deriveClaimOutcomes, formatActor } from '@causeway/workflow';
import type { Kysely, Transaction } from 'kysely';
import type { LeasedTask } from '../db/rows';
import type { CausewayDatabase } from '../db/schema';
import { type FastClaimPlan, taskClaimFast } from '../db/store';
import { type ApplyContext, claimTasks } from './apply-events';
import type { ClaimedTask } from './executor';
import { stepTableOf, upstreamSteps } from './step-table';

/** What a claim took: tasks ready to run, and how many it left because their workflow was busy. */
export interface ClaimResult {
  readonly claimed: readonly ClaimedTask[];
  readonly skipped: number;
}

export interface ClaimRequest {
  readonly queue: string;
  readonly limit: number;
  readonly holder: string;
}

/** The claim edge as data, read off the machine once (null: the machine's claim is not expressible). */
const outcomes = deriveClaimOutcomes();
/**
 * The parts of the plan that never change, built once rather than on every claim; the settle
 * statement uses the same edge for the steps it chains.
 */
export const claimEdge =
  outcomes === null
    ? null
    : {
        to: outcomes.to,
        reason: outcomes.reason,
        attemptIncrement: outcomes.attemptIncrement,
        effectStarted: outcomes.effectStarted,
        parentFrom: [...outcomes.parentAfter.keys()],
        parentTo: [...outcomes.parentAfter.values()],
      };

/** The one-statement claim's parameters, or null when the machine's claim is not expressible. */
export function fastClaimPlan(context: ApplyContext, request: ClaimRequest): FastClaimPlan | null {
  if (claimEdge === null) return null;
  const steps = stepTableOf(context.definitions);
  return {
    ...request,
    ...claimEdge,
    actor: formatActor({ kind: 'worker', name: request.holder }),
    leaseMs: context.leaseMs,
    definedNames: steps.definedNames,
    stepNames: steps.stepNames,
    stepSteps: steps.stepSteps,
    stepKeys: steps.stepKeys,
    stepUpstream: steps.stepUpstream,
  };
}

/**
 * Claims up to `limit` ready tasks of a queue (R4, R8). The common case is one statement
 * (`taskClaimFast`) whose edges come from the machine as data; when a ready task is one it
 * may not decide (a deadline passed, an unusual parent state), the claim is decided in full
 * by the machine (`claimTasks`). With a Kysely instance rather than a transaction, the
 * one-statement claim commits on its own and the full one runs in its own transaction.
 */
export async function claimReadyTasks(
  db: Kysely<CausewayDatabase> | Transaction<CausewayDatabase>,
  context: ApplyContext,
  request: ClaimRequest,
): Promise<ClaimResult> {
  const plan = fastClaimPlan(context, request);
  if (plan !== null) {
    const fast = await taskClaimFast(db, plan);
    if (fast.decided) {
      return {
        claimed: fast.claimed.map((row) =>
          prepareClaimed(context, row.task, row.workflowName, row.input, row.outputs, fast.now),
        ),
        skipped: fast.skipped,
      };
    }
  }
  const full = (tx: Transaction<CausewayDatabase>) => claimInFull(tx, context, request);
  return db.isTransaction
    ? full(db as Transaction<CausewayDatabase>)
    : (db as Kysely<CausewayDatabase>).transaction().execute(full);
}

/** The machine decides every candidate (`claimTasks`): leases, or finalizes past deadlines. */
async function claimInFull(
  tx: Transaction<CausewayDatabase>,
  context: ApplyContext,
  request: ClaimRequest,
): Promise<ClaimResult> {
  const result = await claimTasks(tx, context, request);
  const claimed: ClaimedTask[] = [];
  for (const outcome of result.outcomes) {
    if (outcome.kind !== 'applied' || outcome.edge.to !== 'leased') continue;
    const task = outcome.task;
    const workflow = result.workflows.get(task.workflowId);
    if (workflow === undefined) throw new Error(`claimed task ${task.id} without its workflow`);
    const outputs: Record<string, unknown> = {};
    for (const sibling of result.tasks.values()) {
      if (sibling.workflowId === task.workflowId && sibling.id !== task.id) {
        outputs[sibling.step] = sibling.output;
      }
    }
    claimed.push(prepareClaimed(context, task, workflow.name, workflow.input, outputs, result.now));
  }
  return { claimed, skipped: result.skipped };
}

/** A leased task with its definition, its input and the outputs of its upstream steps. */
export function prepareClaimed(
  context: ApplyContext,
  task: LeasedTask,
  workflowName: string,
  input: unknown,
  outputs: Readonly<Record<string, unknown>>,
  now: Date,
): ClaimedTask {
  const definition = context.definitions.get(workflowName);
  if (definition === undefined) throw new Error(`claimed task ${task.id} of unknown workflow`);
  const step = definition.steps.find((candidate) => candidate.name === task.step);
  if (step === undefined) throw new Error(`workflow "${workflowName}" has no step "${task.step}"`);
  // Outputs of every upstream step, direct or not (they all succeeded, or this would not run).
  const results: Record<string, unknown> = {};
  for (const upstream of upstreamSteps(definition, step.name)) {
    if (upstream in outputs) results[upstream] = outputs[upstream];
  }
  return {
    task,
    definition,
    step,
    input: deepFreeze(input), // ctx.input is read-only at every depth (R30)
    results,
    deadlineInMs: task.deadlineAt === null ? null : task.deadlineAt.getTime() - now.getTime(),
  };
}
