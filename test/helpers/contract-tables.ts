/**
 * The contract's tables written out by hand, for the tests' models (never imported by
 * production, and never derived from it): the task states, the edges, the parent's
 * aggregation (docs/state-machine.md), the retryable error categories (R17), the backoff (R18)
 * and the actor text of a log row (R24).
 *
 * Only type names come from @causeway/workflow, so the compiler keeps the spellings in line;
 * every value here is the contract's, so a model built on these tables can disagree with the
 * code it checks.
 */
import type {
  ActorKind,
  ErrorCategory,
  ReasonCode,
  TaskState,
  WorkflowState,
} from '@causeway/workflow/internal';

/** The task states, in the contract's table order. */
export const specTaskStates = [
  'pending',
  'queued',
  'leased',
  'awaiting_receipt',
  'waiting',
  'awaiting_children',
  'cancel_requested',
  'succeeded',
  'cancelled',
  'dead',
] as const satisfies readonly TaskState[];

export const specTerminalStates: readonly TaskState[] = ['succeeded', 'cancelled', 'dead'];

/** One row of the edge table exactly as printed: "a / b" cells become lists. */
export interface SpecEdgeRow {
  readonly from: TaskState | null;
  readonly to: readonly TaskState[];
  readonly reasons: readonly ReasonCode[];
  readonly actors: readonly ActorKind[];
}

/** The edge table, row by row, without the rows of child workflows (`specChildrenEdgeRows`). */
export const specOrdinaryEdgeRows: readonly SpecEdgeRow[] = [
  {
    from: null,
    to: ['queued', 'pending', 'waiting'],
    reasons: ['submitted'],
    actors: ['client', 'schedule'],
  },
  { from: 'pending', to: ['queued'], reasons: ['upstream_succeeded'], actors: ['system'] },
  {
    from: 'pending',
    to: ['cancelled'],
    reasons: ['cancelled_before_start'],
    actors: ['client', 'operator'],
  },
  { from: 'queued', to: ['leased'], reasons: ['lease_acquired'], actors: ['worker'] },
  {
    from: 'queued',
    to: ['cancelled'],
    reasons: ['cancelled_before_start'],
    actors: ['client', 'operator'],
  },
  { from: 'queued', to: ['dead'], reasons: ['deadline_exceeded_before_start'], actors: ['system'] },
  { from: 'leased', to: ['succeeded'], reasons: ['completed'], actors: ['worker'] },
  {
    from: 'leased',
    to: ['queued'],
    reasons: ['retry_scheduled', 'lease_expired', 'worker_shutdown'],
    actors: ['worker', 'sweeper'],
  },
  { from: 'leased', to: ['queued'], reasons: ['snoozed'], actors: ['worker'] },
  {
    from: 'leased',
    to: ['dead'],
    reasons: [
      'non_retryable_error',
      'attempts_exhausted',
      'lease_expired_effect_uncertain',
      'deadline_exceeded',
    ],
    actors: ['worker', 'sweeper'],
  },
  {
    from: 'leased',
    to: ['awaiting_receipt'],
    reasons: ['submitted_awaiting_receipt'],
    actors: ['worker', 'outbox'],
  },
  {
    from: 'leased',
    to: ['cancel_requested'],
    reasons: ['cancel_requested'],
    actors: ['client', 'operator'],
  },
  {
    from: 'cancel_requested',
    to: ['cancelled'],
    reasons: ['cancel_confirmed', 'lease_expired'],
    actors: ['worker', 'sweeper'],
  },
  {
    from: 'cancel_requested',
    to: ['succeeded', 'awaiting_receipt'],
    reasons: ['cancel_after_submit'],
    actors: ['worker'],
  },
  {
    from: 'cancel_requested',
    to: ['dead'],
    reasons: ['lease_expired_effect_uncertain', 'non_retryable_error'],
    actors: ['sweeper', 'worker'],
  },
  {
    from: 'awaiting_receipt',
    to: ['succeeded'],
    reasons: ['receipt_confirmed'],
    actors: ['receipt'],
  },
  {
    from: 'awaiting_receipt',
    to: ['queued', 'dead'],
    reasons: ['receipt_rejected', 'receipt_timeout'],
    actors: ['receipt', 'sweeper'],
  },
  {
    from: 'dead',
    to: ['queued'],
    reasons: ['manual_replay', 'bulk_requeue'],
    actors: ['operator'],
  },
  { from: 'pending', to: ['waiting'], reasons: ['event_awaited'], actors: ['system'] },
  {
    from: 'waiting',
    to: ['succeeded'],
    reasons: ['event_received', 'event_timeout'],
    actors: ['client', 'operator', 'sweeper'],
  },
  {
    from: 'waiting',
    to: ['dead'],
    reasons: ['event_timeout', 'deadline_exceeded'],
    actors: ['sweeper'],
  },
  {
    from: 'waiting',
    to: ['cancelled'],
    reasons: ['cancelled_while_waiting'],
    actors: ['client', 'operator'],
  },
  {
    from: 'dead',
    to: ['waiting'],
    reasons: ['manual_replay', 'bulk_requeue'],
    actors: ['operator'],
  },
  // R58: a function the engine evaluates for the step (an event key, a map's list) threw or gave
  // an invalid value.
  { from: 'pending', to: ['dead'], reasons: ['step_input_failed'], actors: ['system'] },
  // R52: a debounced submit of the same key replaced a workflow that had not started.
  { from: 'queued', to: ['cancelled'], reasons: ['superseded'], actors: ['client'] },
  { from: 'pending', to: ['cancelled'], reasons: ['superseded'], actors: ['client'] },
];

/** The edge table's rows of a step that starts child workflows (R43–R47). */
export const specChildrenEdgeRows: readonly SpecEdgeRow[] = [
  { from: 'leased', to: ['awaiting_children'], reasons: ['children_started'], actors: ['worker'] },
  { from: 'pending', to: ['awaiting_children'], reasons: ['children_started'], actors: ['system'] },
  {
    from: 'awaiting_children',
    to: ['succeeded'],
    reasons: ['children_succeeded'],
    actors: ['system'],
  },
  // R45: the child edge that decides it (the system); R46: the deadline (the sweeper).
  { from: 'awaiting_children', to: ['dead'], reasons: ['children_failed'], actors: ['system'] },
  { from: 'awaiting_children', to: ['dead'], reasons: ['deadline_exceeded'], actors: ['sweeper'] },
  {
    from: 'awaiting_children',
    to: ['cancel_requested'],
    reasons: ['cancel_requested'],
    actors: ['client', 'operator'],
  },
  {
    from: 'cancel_requested',
    to: ['cancelled'],
    reasons: ['children_cancelled'],
    actors: ['system'],
  },
  // R46: children that all succeeded before the cancel reached them end the step `succeeded`
  // (`cancel_after_submit`). No worker holds the step then: the engine settles it, as it settles
  // every other edge its children decide.
  {
    from: 'cancel_requested',
    to: ['succeeded'],
    reasons: ['cancel_after_submit'],
    actors: ['system'],
  },
  {
    from: 'dead',
    to: ['awaiting_children'],
    reasons: ['manual_replay', 'bulk_requeue'],
    actors: ['operator'],
  },
];

/**
 * R43, R45: a parent step writes its child workflows with their `submitted` edges and cancels
 * their unfinished tasks with ordinary cancel edges, as `parent:<task id>`.
 */
export const specParentActorEdgeRows: readonly SpecEdgeRow[] = [
  {
    from: null,
    to: ['queued', 'pending', 'waiting'],
    reasons: ['submitted'],
    actors: ['parent'],
  },
  {
    from: 'pending',
    to: ['cancelled'],
    reasons: ['cancelled_before_start'],
    actors: ['parent'],
  },
  {
    from: 'queued',
    to: ['cancelled'],
    reasons: ['cancelled_before_start'],
    actors: ['parent'],
  },
  {
    from: 'waiting',
    to: ['cancelled'],
    reasons: ['cancelled_while_waiting'],
    actors: ['parent'],
  },
  {
    from: 'leased',
    to: ['cancel_requested'],
    reasons: ['cancel_requested'],
    actors: ['parent'],
  },
  {
    from: 'awaiting_children',
    to: ['cancel_requested'],
    reasons: ['cancel_requested'],
    actors: ['parent'],
  },
];

/** Who may cancel a task (R12, R13): a client, an operator, or its workflow's parent step (R45). */
export const specCancellers: readonly ActorKind[] = ['client', 'operator', 'parent'];

/** Every row of the edge table. */
export const specEdgeRows: readonly SpecEdgeRow[] = [
  ...specOrdinaryEdgeRows,
  ...specChildrenEdgeRows,
  ...specParentActorEdgeRows,
];

export function specAllowsEdge(
  from: TaskState | null,
  to: TaskState,
  reason: ReasonCode,
  actor: ActorKind,
): boolean {
  return specEdgeRows.some(
    (row) =>
      row.from === from &&
      row.to.includes(to) &&
      row.reasons.includes(reason) &&
      row.actors.includes(actor),
  );
}

/** The aggregation table, by counting the children (the code folds with includes/every), top row first. */
export function specParentState(children: readonly TaskState[]): WorkflowState {
  const count = (state: TaskState) => children.filter((child) => child === state).length;
  const terminal = count('succeeded') + count('cancelled') + count('dead');
  if (count('dead') > 0) return 'dead';
  if (count('succeeded') === children.length) return 'succeeded';
  if (terminal === children.length && count('cancelled') > 0) return 'cancelled';
  if (count('cancel_requested') > 0) return 'cancel_requested';
  const started = count('leased') + count('awaiting_receipt') + count('awaiting_children');
  if (count('waiting') > 0 && started + count('queued') === 0) return 'waiting';
  if (started > 0) return 'running';
  if (count('succeeded') > 0 && terminal < children.length) return 'running';
  return 'queued';
}

/** R17: every error category — transient, non-retryable, and `unknown` for the unclassified. */
export const specErrorCategories = [
  'timeout',
  'throttled',
  'network',
  'unavailable',
  'db_conflict',
  'invalid_argument',
  'not_found',
  'unauthorized',
  'conflict',
  'unknown',
] as const satisfies readonly ErrorCategory[];

/** R17: the categories that are never retried; everything else (incl. unknown) is. */
export const specNonRetryable: readonly ErrorCategory[] = [
  'invalid_argument',
  'not_found',
  'unauthorized',
  'conflict',
];

export const isSpecRetryable = (category: ErrorCategory) => !specNonRetryable.includes(category);

/** The edge table: the operator edges out of dead. */
export const specReplayReasons: readonly ReasonCode[] = ['manual_replay', 'bulk_requeue'];

/** The edge table: every reason an edge into dead may carry. */
export const specDeadReasons: readonly ReasonCode[] = [
  'deadline_exceeded_before_start',
  'non_retryable_error',
  'attempts_exhausted',
  'lease_expired_effect_uncertain',
  'deadline_exceeded',
  'receipt_rejected',
  'receipt_timeout',
  'event_timeout',
  'step_input_failed',
  'children_failed',
];

/**
 * R24's actor column: `client` alone; `worker:<holder>`, `sweeper:<holder>`,
 * `operator:<name>` (and the outbox's dispatcher, `outbox:<name>`, and a schedule,
 * `schedule:<name>`, R40) with who it was; a receipt
 * may say where it came from (`receipt:outbox:<channel>`) or not. The kinds are the edge
 * table's actor column's.
 */
const actorCarriesName: Readonly<Record<ActorKind, boolean | 'optional'>> = {
  client: false,
  system: false,
  receipt: 'optional',
  worker: true,
  sweeper: true,
  operator: true,
  outbox: true,
  schedule: true,
  // `parent:<task id>`: the step that submits and cancels its child workflows (R43, R45).
  parent: true,
};

/** The edge table's actor kinds (the actor column), plus `system` for the edges the engine takes itself. */
export const specActorKinds = Object.keys(actorCarriesName) as readonly ActorKind[];

/** The actor text of a log row (R24) for an actor of `kind` called `name`. */
export function specActorText(actor: { readonly kind: ActorKind; readonly name?: string }): string {
  if (!actorCarriesName[actor.kind] || actor.name === undefined) return actor.kind;
  return `${actor.kind}:${actor.name}`;
}

/** The kind of a log row's actor text (R24); throws on a kind the edge table does not know. */
export function specActorKind(text: string): ActorKind {
  const [kind = ''] = text.split(':', 1);
  if (!Object.hasOwn(actorCarriesName, kind)) {
    throw new Error(`actor ${JSON.stringify(text)} is of no kind the contract knows`);
  }
  const carries = actorCarriesName[kind as ActorKind];
  if (carries !== 'optional' && carries !== text.includes(':')) {
    throw new Error(`actor ${JSON.stringify(text)}: a ${kind} ${carries ? 'says' : 'has no'} who`);
  }
  return kind as ActorKind;
}

/**
 * R18 (exponential backoff with full jitter, capped) on top of a platform's Retry-After: the
 * next attempt runs at now + Retry-After + ⌊jitter × min(cap, initial × coefficient^(attempt − 1))⌋.
 * R51: a `throttled` failure that asked for a wait runs again at exactly now + Retry-After,
 * instead of the backoff.
 */
export function specRetryAtMs(
  nowMs: number,
  failedAttempt: number,
  backoff: {
    readonly initialIntervalMs: number;
    readonly backoffCoefficient: number;
    readonly maximumIntervalMs: number;
  },
  jitter: number,
  failure: { readonly category: string; readonly retryAfterMs: number | undefined },
): number {
  const { category, retryAfterMs } = failure;
  if (category === 'throttled' && retryAfterMs !== undefined) return nowMs + retryAfterMs;
  const window = Math.min(
    backoff.maximumIntervalMs,
    backoff.initialIntervalMs * backoff.backoffCoefficient ** (failedAttempt - 1),
  );
  return nowMs + (retryAfterMs ?? 0) + Math.floor(jitter * window);
}
