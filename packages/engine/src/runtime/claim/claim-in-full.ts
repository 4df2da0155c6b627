import { claimRule, type TaskEvent } from '@causeway/workflow/internal';
import type { Transaction } from 'kysely';
import { taskClaimLoad } from '../../db/claim/claim-load';
import { flowGrant } from '../../db/claim/flow-grant';
import type { CausewayDatabase } from '../../db/schema';
import { decideAndWrite } from '../decision/apply-events';
import type { ApplyContext, ApplyResult } from '../decision/event-request';
import { rateLimitPlanOf, stepTableOf } from '../step-table';
import {
  type ClaimedTask,
  type ClaimRequest,
  type ClaimResult,
  prepareClaimed,
} from './claimed-task';

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
  const steps = stepTableOf(context.definitions);
  const loaded = await taskClaimLoad(tx, claim.queue, claim.limit, steps.stepKeys, {
    keyed: steps.keyedQueues.has(claim.queue),
    rated: steps.ratedQueues.has(claim.queue),
  });
  // Candidates a key (R50) or a rate limit (R51) holds back only if granted; the others wait.
  const granted = await flowGrant(
    tx,
    claim.queue,
    loaded.flowCandidates,
    rateLimitPlanOf(context.rateLimits),
    loaded.now,
  );
  const held = new Set(loaded.flowCandidates.map((candidate) => candidate.id));
  const candidateIds = loaded.candidateIds.filter((id) => !held.has(id) || granted.has(id));
  const actor = { kind: 'worker', name: claim.holder } as const;
  const requests = candidateIds.map((taskId) => ({
    taskId,
    event: { type: 'claim', actor } satisfies TaskEvent,
  }));
  const result = await decideAndWrite(tx, context, loaded, requests, { holder: claim.holder });
  return { ...result, skipped: loaded.skipped + loaded.candidateIds.length - candidateIds.length };
}

/** The machine decides every candidate (`claimTasks`): leases, or finalizes past deadlines. */
export async function claimInFull(
  tx: Transaction<CausewayDatabase>,
  context: ApplyContext,
  request: ClaimRequest,
): Promise<ClaimResult> {
  const result = await claimTasks(tx, context, request);
  const claimed: ClaimedTask[] = [];
  for (const outcome of result.outcomes) {
    if (outcome.kind !== 'applied' || outcome.edge.to !== claimRule.to) continue;
    const task = outcome.task;
    const workflow = result.workflows.get(task.workflowId);
    if (workflow === undefined) throw new Error(`claimed task ${task.id} without its workflow`);
    const outputs: Record<string, unknown> = {};
    for (const sibling of result.tasks.values()) {
      if (sibling.workflowId === task.workflowId && sibling.id !== task.id) {
        outputs[sibling.step] = sibling.output;
      }
    }
    const awaited = workflow.parent !== null && !workflow.parent.detached;
    claimed.push(prepareClaimed(context, task, workflow, outputs, result.now, awaited));
  }
  return { claimed, skipped: result.skipped };
}
