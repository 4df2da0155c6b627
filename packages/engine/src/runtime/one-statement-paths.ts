import {
  deriveClaimOutcomes,
  deriveCompleteOutcomes,
  deriveEventOutcomes,
  type EdgeRule,
  promotionRule,
  taskEdges,
  taskStates,
} from '@causeway/workflow/internal';
import type { ClaimEdgePlan, EventEdgePlan, SettleEdgePlan } from '../db/edge-plans';

export interface OneStatementPaths {
  readonly claim: ClaimEdgePlan;
  readonly settle: SettleEdgePlan;
  readonly send: EventEdgePlan;
}

/**
 * Derives the one-statement paths (claim, settle, send) from the machine and the edge table `rules`, or throws an
 * error that says which edge cannot be written by one statement and why. The engine does this
 * at start: a table the statements cannot follow stops it there instead of silently
 * switching them off.
 */
export function deriveOneStatementPaths(rules: readonly EdgeRule[] = taskEdges): OneStatementPaths {
  const claim = deriveClaimOutcomes(rules);
  if (!claim.ok) {
    throw new Error(
      `Causeway cannot derive its one-statement claim from the edge table: ${claim.reason}`,
    );
  }
  const complete = deriveCompleteOutcomes(rules);
  if (!complete.ok) {
    throw new Error(
      `Causeway cannot derive its one-statement settle from the edge table: ${complete.reason}`,
    );
  }
  const event = deriveEventOutcomes(rules);
  if (!event.ok) {
    throw new Error(
      `Causeway cannot derive its one-statement send from the edge table: ${event.reason}`,
    );
  }
  const { rule, reason, parentAfter } = claim.outcomes;
  const { completeEdges, completeRule, promote, parentByPresence } = complete.outcomes;
  return {
    claim: {
      from: rule.from as string,
      to: rule.to,
      reason,
      effects: rule,
      parentFrom: [...parentAfter.keys()],
      parentTo: [...parentAfter.values()],
    },
    settle: {
      completeFrom: completeEdges.map((edge) => edge.from),
      completeTo: completeEdges.map((edge) => edge.to),
      completeReason: completeEdges.map((edge) => edge.reason),
      completeEffects: completeRule,
      promoteFrom: promotionRule.from,
      promoteTo: promote.to,
      promoteReason: promote.reason,
      promoteActor: promote.actor,
      promoteEffects: promote.rule,
      upstreamState: promotionRule.upstreamState,
      stateOrder: [...taskStates],
      presenceMasks: [...parentByPresence.keys()],
      presenceStates: [...parentByPresence.values()],
    },
    send: {
      eventFrom: event.outcomes.from,
      eventTo: event.outcomes.to,
      eventReason: event.outcomes.reason,
      eventEffects: event.outcomes.rule,
    },
  };
}

let shipped: OneStatementPaths | undefined;

/** The paths of the shipped edge table, derived once (`deriveOneStatementPaths`). */
export function oneStatementPaths(): OneStatementPaths {
  shipped ??= deriveOneStatementPaths();
  return shipped;
}
