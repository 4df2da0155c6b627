import { type RawBuilder, sql } from 'kysely';
import { constantArraySql } from '../array-literal';
import { everyStepDefined } from '../claim/defined-workflow-step';
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
  /** Each step this engine defines as `workflow/step` (the claim's `stepKeys`). */
  readonly stepKeys: readonly string[];
  readonly eventStepWorkflows: readonly string[];
  readonly eventStepSteps: readonly string[];
  readonly eventStepEvents: readonly string[];
}

/**
 * What is built once per engine's shape and variant (a statement's text, a send function):
 * `make` runs on the first call for a (shape, key) and its value is kept for every later one.
 */
export function builtOncePerShape<Value>(
  cache: WeakMap<EventSendShape, Map<string, Value>>,
  shape: EventSendShape,
  key: string,
  make: () => Value,
): Value {
  let byKey = cache.get(shape);
  if (byKey === undefined) {
    byKey = new Map();
    cache.set(shape, byKey);
  }
  let value = byKey.get(key);
  if (value === undefined) {
    value = make();
    byKey.set(key, value);
  }
  return value;
}

/** Each event step as one text, `workflow\nstep\nevent`, for lookups in a constant array. */
export function eventStepKeys(shape: EventSendShape): string[] {
  return shape.eventStepWorkflows.map((name, index) =>
    [name, shape.eventStepSteps[index] as string, shape.eventStepEvents[index] as string].join(
      '\n',
    ),
  );
}

/**
 * Whether this engine defines every step the workflow `w` was submitted with (R54): a send
 * completes only such waits. A row without `steps` (not written by a submit) passes: its
 * task's own step decides, as the event step keys do.
 */
export function definesEveryStepSql(shape: EventSendShape): RawBuilder<unknown> {
  return everyStepDefined(sql`w`, sql`'{}'::text[]`, constantArraySql(shape.stepKeys, 'text'));
}

/**
 * The parent's state by presence mask (bit i: some task is in stateOrder[i]), as an array
 * subscripted by the mask (null where no mask is listed).
 */
export function parentStateByMask(shape: EventSendShape): (string | null)[] {
  const byMask = new Map(shape.presenceMasks.map((mask, i) => [mask, shape.presenceStates[i]]));
  const maskCount = 2 ** shape.stateOrder.length - 1;
  return Array.from({ length: maskCount }, (_, i) => byMask.get(i + 1) ?? null);
}

/** Per `workflow\nstep`: the steps it runs after directly, and its place in the definition. */
export function stepLookups(shape: EventSendShape): {
  readonly stepAfter: Record<string, unknown>;
  readonly stepOrder: Record<string, number>;
} {
  const stepAfter: Record<string, unknown> = {};
  const stepOrder: Record<string, number> = {};
  shape.stepNames.forEach((name, index) => {
    const key = `${name}\n${shape.stepSteps[index] as string}`;
    stepAfter[key] = JSON.parse(shape.stepAfter[index] as string);
    stepOrder[key] = shape.stepOrder[index] as number;
  });
  return { stepAfter, stepOrder };
}
