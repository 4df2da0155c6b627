import type { EdgeEffects } from '@causeway/workflow/internal';

/** The claim edge as the one-statement claim (and the settle's chained claims) write it. */
export interface ClaimEdgePlan {
  readonly from: string;
  readonly to: string;
  readonly reason: string;
  readonly effects: EdgeEffects;
  /** The parent's state after a claim, by its state before (where that alone decides it). */
  readonly parentFrom: readonly string[];
  readonly parentTo: readonly string[];
}

/** The complete and promotion edges and the aggregation as the one-statement settle writes them. */
export interface SettleEdgePlan {
  readonly completeFrom: readonly string[];
  readonly completeTo: readonly string[];
  readonly completeReason: readonly string[];
  readonly completeEffects: EdgeEffects;
  readonly promoteFrom: string;
  readonly promoteTo: string;
  readonly promoteReason: string;
  readonly promoteActor: string;
  readonly promoteEffects: EdgeEffects;
  /** The state every `after` step must be in for promotion (`promotionRule`). */
  readonly upstreamState: string;
  /** Task states in bit order, and the parent's state for each presence mask. */
  readonly stateOrder: readonly string[];
  readonly presenceMasks: readonly number[];
  readonly presenceStates: readonly string[];
}

/** The edge an event takes from a waiting task, as the one-statement send writes it. */
export interface EventEdgePlan {
  readonly eventFrom: string;
  readonly eventTo: string;
  readonly eventReason: string;
  readonly eventEffects: EdgeEffects;
}
