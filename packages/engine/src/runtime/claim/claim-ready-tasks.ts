import { formatActor } from '@causeway/workflow/internal';
import type { Kysely, Transaction } from 'kysely';
import { type ClaimStatementPlan, taskClaimInOneStatement } from '../../db/claim/claim-statement';
import type { CausewayDatabase } from '../../db/schema';
import type { ApplyContext } from '../decision/event-request';
import { oneStatementPaths } from '../one-statement-paths';
import { rateLimitPlanOf, stepTableOf } from '../step-table';
import { transactionRecordingWaits } from '../tracing/committed-wait-spans';
import { claimInFull } from './claim-in-full';
import type { ClaimRequest, ClaimResult } from './claimed-task';
import { claimedFromStatement } from './claimed-task';

/** The one-statement claim's parameters: the claim edge (`oneStatementPaths`) and the steps. */
export function claimStatementPlan(
  context: ApplyContext,
  request: ClaimRequest,
): ClaimStatementPlan {
  const steps = stepTableOf(context.definitions);
  return {
    ...request,
    ...oneStatementPaths().claim,
    actor: formatActor({ kind: 'worker', name: request.holder }),
    leaseMs: context.leaseMs,
    definedNames: steps.definedNames,
    stepNames: steps.stepNames,
    stepVersions: steps.stepVersions,
    stepLatest: steps.stepLatest,
    stepSteps: steps.stepSteps,
    stepKeys: steps.stepKeys,
    stepUpstream: steps.stepUpstream,
    keyed: steps.keyedQueues.has(request.queue),
    rated: steps.ratedQueues.has(request.queue),
    rateLimits: rateLimitPlanOf(context.rateLimits),
  };
}

/**
 * Claims up to `limit` ready tasks of a queue (R4, R8). The common case is one statement
 * (`taskClaimInOneStatement`) whose edge comes from the machine and the edge table; when a ready task is one it
 * may not decide (a deadline passed, an unusual parent state), the claim is decided in full
 * by the machine (`claimTasks`). With a Kysely instance rather than a transaction, the
 * one-statement claim commits on its own and the full one runs in its own transaction.
 */
export async function claimReadyTasks(
  db: Kysely<CausewayDatabase> | Transaction<CausewayDatabase>,
  context: ApplyContext,
  request: ClaimRequest,
): Promise<ClaimResult> {
  const inOne = await taskClaimInOneStatement(db, claimStatementPlan(context, request));
  if (inOne.decided) {
    return {
      claimed: inOne.claimed.map((row) => claimedFromStatement(context, row, inOne.now)),
      skipped: inOne.skipped,
      nextSlotInMs: inOne.nextSlotInMs,
    };
  }
  const full = (tx: Transaction<CausewayDatabase>) => claimInFull(tx, context, request);
  return db.isTransaction
    ? full(db as Transaction<CausewayDatabase>)
    : transactionRecordingWaits({ db: db as Kysely<CausewayDatabase> }, full);
}
