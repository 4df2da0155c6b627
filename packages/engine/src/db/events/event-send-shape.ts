import type { EventEdgePlan, SettleEdgePlan } from '../edge-plans';
import type { StepColumns } from '../settle/shared-ctes';

type PromotionPlan = Omit<
  SettleEdgePlan,
  'completeFrom' | 'completeTo' | 'completeReason' | 'completeEffects'
>;

/**
 * What the one-statement send is made of for one engine: the edges, the engine's steps and its
 * event steps (workflow name, step, event name). The statement's texts depend on nothing else
 * (and on their variant, `EventSendVariant`), so each is built once and every send only binds
 * its events.
 */
export interface EventSendShape
  extends PromotionPlan,
    EventEdgePlan,
    Pick<StepColumns, 'stepNames' | 'stepSteps' | 'stepAfter' | 'stepOrder'> {
  readonly eventStepWorkflows: readonly string[];
  readonly eventStepSteps: readonly string[];
  readonly eventStepEvents: readonly string[];
}
