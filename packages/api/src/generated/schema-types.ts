// Generated from schema.graphql by packages/api/src/codegen. Do not edit: run
// `pnpm generate` (test/api/schema-types.test.ts checks it).
/* eslint-disable */

export type Maybe<T> = T | null | undefined;

/** TypeScript values of the scalars (custom ones as the resolvers parse and serialize them). */
export interface Scalars {
  ID: string;
  String: string;
  Int: number;
  Float: number;
  Boolean: boolean;
  DateTime: Date;
  JSON: unknown;
}

/** GraphQL enum AttemptOutcome, as the domain's lowercase codes. */
export type AttemptOutcome = 'settled' | 'lease_lost' | 'stale' | 'running';
export const attemptOutcomeGraphQLValues = ['SETTLED', 'LEASE_LOST', 'STALE', 'RUNNING'] as const;

/** GraphQL enum BlockerCode, as the domain's lowercase codes. */
export type BlockerCode =
  | 'upstream_pending'
  | 'not_due'
  | 'no_worker'
  | 'queue_full'
  | 'lease_stale'
  | 'running'
  | 'claimable'
  | 'awaiting_receipt'
  | 'waiting_for_event'
  | 'cancel_pending'
  | 'children_pending'
  | 'queue_paused'
  | 'concurrency_limited'
  | 'rate_limited';
export const blockerCodeGraphQLValues = [
  'UPSTREAM_PENDING',
  'NOT_DUE',
  'NO_WORKER',
  'QUEUE_FULL',
  'LEASE_STALE',
  'RUNNING',
  'CLAIMABLE',
  'AWAITING_RECEIPT',
  'WAITING_FOR_EVENT',
  'CANCEL_PENDING',
  'CHILDREN_PENDING',
  'QUEUE_PAUSED',
  'CONCURRENCY_LIMITED',
  'RATE_LIMITED',
] as const;

/** GraphQL enum CatchUp, as the domain's lowercase codes. */
export type CatchUp = 'latest' | 'all' | 'none';
export const catchUpGraphQLValues = ['LATEST', 'ALL', 'NONE'] as const;

/** GraphQL enum ErrorCategory, as the domain's lowercase codes. */
export type ErrorCategory =
  | 'timeout'
  | 'throttled'
  | 'network'
  | 'unavailable'
  | 'db_conflict'
  | 'invalid_argument'
  | 'not_found'
  | 'unauthorized'
  | 'conflict'
  | 'unknown';
export const errorCategoryGraphQLValues = [
  'TIMEOUT',
  'THROTTLED',
  'NETWORK',
  'UNAVAILABLE',
  'DB_CONFLICT',
  'INVALID_ARGUMENT',
  'NOT_FOUND',
  'UNAUTHORIZED',
  'CONFLICT',
  'UNKNOWN',
] as const;

/** GraphQL enum QueuePauseEventKind, as the domain's lowercase codes. */
export type QueuePauseEventKind = 'paused' | 'resumed';
export const queuePauseEventKindGraphQLValues = ['PAUSED', 'RESUMED'] as const;

/** GraphQL enum ReasonCode, as the domain's lowercase codes. */
export type ReasonCode =
  | 'submitted'
  | 'upstream_succeeded'
  | 'cancelled_before_start'
  | 'lease_acquired'
  | 'deadline_exceeded_before_start'
  | 'completed'
  | 'retry_scheduled'
  | 'lease_expired'
  | 'worker_shutdown'
  | 'non_retryable_error'
  | 'attempts_exhausted'
  | 'lease_expired_effect_uncertain'
  | 'deadline_exceeded'
  | 'submitted_awaiting_receipt'
  | 'cancel_requested'
  | 'cancel_confirmed'
  | 'cancel_after_submit'
  | 'receipt_confirmed'
  | 'receipt_rejected'
  | 'receipt_timeout'
  | 'manual_replay'
  | 'bulk_requeue'
  | 'snoozed'
  | 'event_awaited'
  | 'event_received'
  | 'event_timeout'
  | 'cancelled_while_waiting'
  | 'step_input_failed'
  | 'children_started'
  | 'children_succeeded'
  | 'children_failed'
  | 'children_cancelled'
  | 'superseded';
export const reasonCodeGraphQLValues = [
  'SUBMITTED',
  'UPSTREAM_SUCCEEDED',
  'CANCELLED_BEFORE_START',
  'LEASE_ACQUIRED',
  'DEADLINE_EXCEEDED_BEFORE_START',
  'COMPLETED',
  'RETRY_SCHEDULED',
  'LEASE_EXPIRED',
  'WORKER_SHUTDOWN',
  'NON_RETRYABLE_ERROR',
  'ATTEMPTS_EXHAUSTED',
  'LEASE_EXPIRED_EFFECT_UNCERTAIN',
  'DEADLINE_EXCEEDED',
  'SUBMITTED_AWAITING_RECEIPT',
  'CANCEL_REQUESTED',
  'CANCEL_CONFIRMED',
  'CANCEL_AFTER_SUBMIT',
  'RECEIPT_CONFIRMED',
  'RECEIPT_REJECTED',
  'RECEIPT_TIMEOUT',
  'MANUAL_REPLAY',
  'BULK_REQUEUE',
  'SNOOZED',
  'EVENT_AWAITED',
  'EVENT_RECEIVED',
  'EVENT_TIMEOUT',
  'CANCELLED_WHILE_WAITING',
  'STEP_INPUT_FAILED',
  'CHILDREN_STARTED',
  'CHILDREN_SUCCEEDED',
  'CHILDREN_FAILED',
  'CHILDREN_CANCELLED',
  'SUPERSEDED',
] as const;

/** GraphQL enum ReceiptOutcome, as the domain's lowercase codes. */
export type ReceiptOutcome = 'confirmed' | 'rejected';
export const receiptOutcomeGraphQLValues = ['CONFIRMED', 'REJECTED'] as const;

/** GraphQL enum ScheduleEventKind, as the domain's lowercase codes. */
export type ScheduleEventKind = 'paused' | 'resumed' | 'triggered';
export const scheduleEventKindGraphQLValues = ['PAUSED', 'RESUMED', 'TRIGGERED'] as const;

/** GraphQL enum TaskState, as the domain's lowercase codes. */
export type TaskState =
  | 'pending'
  | 'queued'
  | 'leased'
  | 'awaiting_receipt'
  | 'waiting'
  | 'awaiting_children'
  | 'cancel_requested'
  | 'succeeded'
  | 'cancelled'
  | 'dead';
export const taskStateGraphQLValues = [
  'PENDING',
  'QUEUED',
  'LEASED',
  'AWAITING_RECEIPT',
  'WAITING',
  'AWAITING_CHILDREN',
  'CANCEL_REQUESTED',
  'SUCCEEDED',
  'CANCELLED',
  'DEAD',
] as const;

/** GraphQL enum VersionStatus, as the domain's lowercase codes. */
export type VersionStatus = 'serving' | 'draining' | 'drained';
export const versionStatusGraphQLValues = ['SERVING', 'DRAINING', 'DRAINED'] as const;

/** GraphQL enum WorkflowOrder, as the domain's lowercase codes. */
export type WorkflowOrder = 'newest_first' | 'oldest_first';
export const workflowOrderGraphQLValues = ['NEWEST_FIRST', 'OLDEST_FIRST'] as const;

/** GraphQL enum WorkflowState, as the domain's lowercase codes. */
export type WorkflowState =
  | 'queued'
  | 'running'
  | 'waiting'
  | 'cancel_requested'
  | 'succeeded'
  | 'cancelled'
  | 'dead';
export const workflowStateGraphQLValues = [
  'QUEUED',
  'RUNNING',
  'WAITING',
  'CANCEL_REQUESTED',
  'SUCCEEDED',
  'CANCELLED',
  'DEAD',
] as const;

/** Every enum of the schema with its GraphQL values. */
export const graphQLEnums = {
  AttemptOutcome: attemptOutcomeGraphQLValues,
  BlockerCode: blockerCodeGraphQLValues,
  CatchUp: catchUpGraphQLValues,
  ErrorCategory: errorCategoryGraphQLValues,
  QueuePauseEventKind: queuePauseEventKindGraphQLValues,
  ReasonCode: reasonCodeGraphQLValues,
  ReceiptOutcome: receiptOutcomeGraphQLValues,
  ScheduleEventKind: scheduleEventKindGraphQLValues,
  TaskState: taskStateGraphQLValues,
  VersionStatus: versionStatusGraphQLValues,
  WorkflowOrder: workflowOrderGraphQLValues,
  WorkflowState: workflowStateGraphQLValues,
} as const;

export interface MutationSubmitWorkflowArgs {
  readonly name: Scalars['String'];
  readonly input: Scalars['JSON'];
  readonly idempotencyKey?: Scalars['String'] | null;
  readonly priority?: Scalars['Int'] | null;
  readonly attributes?: Scalars['JSON'] | null;
  readonly clientMutationId?: Scalars['String'] | null;
}

export interface MutationCancelWorkflowArgs {
  readonly id: Scalars['ID'];
  readonly reason?: Scalars['String'] | null;
  readonly clientMutationId?: Scalars['String'] | null;
}

export interface MutationCancelTaskArgs {
  readonly id: Scalars['ID'];
  readonly reason?: Scalars['String'] | null;
  readonly clientMutationId?: Scalars['String'] | null;
}

export interface MutationReplayTaskArgs {
  readonly id: Scalars['ID'];
  readonly reason: Scalars['String'];
  readonly clientMutationId?: Scalars['String'] | null;
}

export interface MutationRequeueDeadArgs {
  readonly reasonCode: ReasonCode;
  readonly from: Scalars['DateTime'];
  readonly to: Scalars['DateTime'];
  readonly reason: Scalars['String'];
  readonly clientMutationId?: Scalars['String'] | null;
}

export interface MutationRecordReceiptArgs {
  readonly taskId: Scalars['ID'];
  readonly outcome: ReceiptOutcome;
  readonly errorCategory?: ErrorCategory | null;
  readonly message?: Scalars['String'] | null;
  readonly clientMutationId?: Scalars['String'] | null;
}

export interface MutationSendEventArgs {
  readonly name: Scalars['String'];
  readonly key: Scalars['String'];
  readonly payload: Scalars['JSON'];
  readonly idempotencyKey?: Scalars['String'] | null;
  readonly reason?: Scalars['String'] | null;
  readonly clientMutationId?: Scalars['String'] | null;
}

export interface MutationPauseScheduleArgs {
  readonly name: Scalars['String'];
  readonly reason: Scalars['String'];
  readonly clientMutationId?: Scalars['String'] | null;
}

export interface MutationResumeScheduleArgs {
  readonly name: Scalars['String'];
  readonly reason: Scalars['String'];
  readonly clientMutationId?: Scalars['String'] | null;
}

export interface MutationPauseQueueArgs {
  readonly name: Scalars['String'];
  readonly reason: Scalars['String'];
  readonly clientMutationId?: Scalars['String'] | null;
}

export interface MutationResumeQueueArgs {
  readonly name: Scalars['String'];
  readonly reason?: Scalars['String'] | null;
  readonly clientMutationId?: Scalars['String'] | null;
}

export interface MutationTriggerScheduleArgs {
  readonly name: Scalars['String'];
  readonly reason: Scalars['String'];
  readonly clientMutationId?: Scalars['String'] | null;
}

export interface MutationPurgeFinishedArgs {
  readonly olderThanMs: Scalars['Float'];
  readonly reason: Scalars['String'];
  readonly dryRun?: Scalars['Boolean'] | null;
  readonly clientMutationId?: Scalars['String'] | null;
}

export interface QueryWorkflowArgs {
  readonly id: Scalars['ID'];
}

export interface QueryWorkflowsArgs {
  readonly state?: readonly WorkflowState[] | null;
  readonly name?: Scalars['String'] | null;
  readonly parentId?: Scalars['ID'] | null;
  readonly rootId?: Scalars['ID'] | null;
  readonly attributes?: Scalars['JSON'] | null;
  readonly first?: Scalars['Int'] | null;
  readonly after?: Scalars['String'] | null;
  readonly order?: WorkflowOrder | null;
}

export interface QueryTaskArgs {
  readonly id: Scalars['ID'];
}

export interface QueryConcurrencyGroupsArgs {
  readonly keys?: Scalars['Int'] | null;
}

export interface QueryRateLimitsArgs {
  readonly name?: Scalars['String'] | null;
  readonly keysPerLimit?: Scalars['Int'] | null;
}

export interface QueryWorkersArgs {
  readonly includeStale?: Scalars['Boolean'] | null;
}

export interface SubscriptionTransitionsArgs {
  readonly workflowId?: Scalars['ID'] | null;
  readonly after?: Scalars['ID'] | null;
}

export interface WorkflowChildrenArgs {
  readonly state?: readonly WorkflowState[] | null;
  readonly step?: Scalars['String'] | null;
  readonly first?: Scalars['Int'] | null;
  readonly after?: Scalars['String'] | null;
}

export type ObjectTypeName =
  | 'Attempt'
  | 'Blocker'
  | 'CancelWorkflowPayload'
  | 'ConcurrencyGroup'
  | 'ConcurrencyKey'
  | 'ConcurrencySlotHolder'
  | 'DroppedPartition'
  | 'Event'
  | 'EventStepDefinition'
  | 'HeldPartition'
  | 'Mutation'
  | 'OutboxMessage'
  | 'PageInfo'
  | 'PurgeFinishedPayload'
  | 'Query'
  | 'Queue'
  | 'QueuePause'
  | 'QueuePauseEvent'
  | 'QueuePayload'
  | 'RateKeyState'
  | 'RateLimitState'
  | 'RequeueDeadPayload'
  | 'RetryPolicy'
  | 'Schedule'
  | 'ScheduleEvent'
  | 'SchedulePause'
  | 'SchedulePayload'
  | 'SendEventPayload'
  | 'StepChildCounts'
  | 'StepDefinition'
  | 'StepEdge'
  | 'SubmitDebounce'
  | 'SubmitWorkflowPayload'
  | 'Subscription'
  | 'Task'
  | 'TaskConcurrency'
  | 'TaskOperationPayload'
  | 'TaskOperationResult'
  | 'Transition'
  | 'TriggerSchedulePayload'
  | 'WaitingFor'
  | 'Worker'
  | 'WorkerQueue'
  | 'WorkerWorkflow'
  | 'Workflow'
  | 'WorkflowConnection'
  | 'WorkflowDefinition'
  | 'WorkflowEdge'
  | 'WorkflowParent'
  | 'WorkflowStateCount';

/** The TypeScript value each object type resolves from (the "parent" of its fields). */
export type ModelMap = { readonly [Name in ObjectTypeName]: unknown };

/** Every object field: its arguments and the value its resolver must produce. */
export interface SchemaFields<M extends ModelMap> {
  Attempt: {
    attempt: { args: Record<string, never>; result: Scalars['Int'] };
    epoch: { args: Record<string, never>; result: Scalars['Int'] };
    holder: { args: Record<string, never>; result: Scalars['String'] };
    leasedAt: { args: Record<string, never>; result: Scalars['DateTime'] };
    endedAt: { args: Record<string, never>; result: Maybe<Scalars['DateTime']> };
    outcome: { args: Record<string, never>; result: AttemptOutcome };
    reason: { args: Record<string, never>; result: Maybe<ReasonCode> };
    refusedAt: { args: Record<string, never>; result: Maybe<Scalars['DateTime']> };
  };
  Blocker: {
    taskId: { args: Record<string, never>; result: Scalars['ID'] };
    step: { args: Record<string, never>; result: Scalars['String'] };
    code: { args: Record<string, never>; result: BlockerCode };
    message: { args: Record<string, never>; result: Scalars['String'] };
    until: { args: Record<string, never>; result: Maybe<Scalars['DateTime']> };
    facts: { args: Record<string, never>; result: Scalars['JSON'] };
  };
  CancelWorkflowPayload: {
    clientMutationId: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    workflowId: { args: Record<string, never>; result: Scalars['ID'] };
    state: { args: Record<string, never>; result: WorkflowState };
    changed: { args: Record<string, never>; result: Scalars['Boolean'] };
    workflow: { args: Record<string, never>; result: M['Workflow'] };
  };
  ConcurrencyGroup: {
    name: { args: Record<string, never>; result: Scalars['String'] };
    limit: { args: Record<string, never>; result: Scalars['Int'] };
    defined: { args: Record<string, never>; result: Scalars['Boolean'] };
    steps: { args: Record<string, never>; result: readonly Scalars['String'][] };
    keysBusy: { args: Record<string, never>; result: Scalars['Int'] };
    held: { args: Record<string, never>; result: Scalars['Int'] };
    queued: { args: Record<string, never>; result: Scalars['Int'] };
    keys: { args: Record<string, never>; result: readonly M['ConcurrencyKey'][] };
  };
  ConcurrencyKey: {
    key: { args: Record<string, never>; result: Scalars['String'] };
    limit: { args: Record<string, never>; result: Maybe<Scalars['Int']> };
    held: { args: Record<string, never>; result: Scalars['Int'] };
    queued: { args: Record<string, never>; result: Scalars['Int'] };
    holders: { args: Record<string, never>; result: readonly M['ConcurrencySlotHolder'][] };
  };
  ConcurrencySlotHolder: {
    taskId: { args: Record<string, never>; result: Scalars['ID'] };
    workflowId: { args: Record<string, never>; result: Scalars['ID'] };
    step: { args: Record<string, never>; result: Scalars['String'] };
    state: { args: Record<string, never>; result: TaskState };
    leaseHolder: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    since: { args: Record<string, never>; result: Scalars['DateTime'] };
  };
  DroppedPartition: {
    name: { args: Record<string, never>; result: Scalars['String'] };
    workflows: { args: Record<string, never>; result: Scalars['Int'] };
    tasks: { args: Record<string, never>; result: Scalars['Int'] };
    logRows: { args: Record<string, never>; result: Scalars['Int'] };
  };
  Event: {
    id: { args: Record<string, never>; result: Scalars['ID'] };
    name: { args: Record<string, never>; result: Scalars['String'] };
    key: { args: Record<string, never>; result: Scalars['String'] };
    payload: { args: Record<string, never>; result: Scalars['JSON'] };
    sentBy: { args: Record<string, never>; result: Scalars['String'] };
    reason: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    receivedAt: { args: Record<string, never>; result: Scalars['DateTime'] };
  };
  EventStepDefinition: {
    name: { args: Record<string, never>; result: Scalars['String'] };
    timeoutMs: { args: Record<string, never>; result: Scalars['Int'] };
    succeedsOnTimeout: { args: Record<string, never>; result: Scalars['Boolean'] };
    onTimeout: { args: Record<string, never>; result: Maybe<Scalars['JSON']> };
  };
  HeldPartition: {
    name: { args: Record<string, never>; result: Scalars['String'] };
    liveWorkflows: { args: Record<string, never>; result: Scalars['Int'] };
    youngWorkflows: { args: Record<string, never>; result: Scalars['Int'] };
    liveWorkflowIds: { args: Record<string, never>; result: readonly Scalars['ID'][] };
    youngWorkflowIds: { args: Record<string, never>; result: readonly Scalars['ID'][] };
    busy: { args: Record<string, never>; result: Scalars['Boolean'] };
    message: { args: Record<string, never>; result: Scalars['String'] };
  };
  Mutation: {
    submitWorkflow: { args: MutationSubmitWorkflowArgs; result: M['SubmitWorkflowPayload'] };
    cancelWorkflow: { args: MutationCancelWorkflowArgs; result: M['CancelWorkflowPayload'] };
    cancelTask: { args: MutationCancelTaskArgs; result: M['TaskOperationPayload'] };
    replayTask: { args: MutationReplayTaskArgs; result: M['TaskOperationPayload'] };
    requeueDead: { args: MutationRequeueDeadArgs; result: M['RequeueDeadPayload'] };
    recordReceipt: { args: MutationRecordReceiptArgs; result: M['TaskOperationPayload'] };
    sendEvent: { args: MutationSendEventArgs; result: M['SendEventPayload'] };
    pauseSchedule: { args: MutationPauseScheduleArgs; result: M['SchedulePayload'] };
    resumeSchedule: { args: MutationResumeScheduleArgs; result: M['SchedulePayload'] };
    pauseQueue: { args: MutationPauseQueueArgs; result: M['QueuePayload'] };
    resumeQueue: { args: MutationResumeQueueArgs; result: M['QueuePayload'] };
    triggerSchedule: { args: MutationTriggerScheduleArgs; result: M['TriggerSchedulePayload'] };
    purgeFinished: { args: MutationPurgeFinishedArgs; result: M['PurgeFinishedPayload'] };
  };
  OutboxMessage: {
    id: { args: Record<string, never>; result: Scalars['ID'] };
    channel: { args: Record<string, never>; result: Scalars['String'] };
    state: { args: Record<string, never>; result: Scalars['String'] };
    attempts: { args: Record<string, never>; result: Scalars['Int'] };
    lastError: { args: Record<string, never>; result: Maybe<Scalars['String']> };
  };
  PageInfo: {
    hasNextPage: { args: Record<string, never>; result: Scalars['Boolean'] };
    endCursor: { args: Record<string, never>; result: Maybe<Scalars['String']> };
  };
  PurgeFinishedPayload: {
    clientMutationId: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    dryRun: { args: Record<string, never>; result: Scalars['Boolean'] };
    cutoffAt: { args: Record<string, never>; result: Scalars['DateTime'] };
    workflowsRemoved: { args: Record<string, never>; result: Scalars['Int'] };
    tasksRemoved: { args: Record<string, never>; result: Scalars['Int'] };
    logRowsRemoved: { args: Record<string, never>; result: Scalars['Int'] };
    eventsRemoved: { args: Record<string, never>; result: Maybe<Scalars['Int']> };
    deliveriesRemoved: { args: Record<string, never>; result: Maybe<Scalars['Int']> };
    versionsRemoved: { args: Record<string, never>; result: Maybe<Scalars['Int']> };
    partitionsDropped: { args: Record<string, never>; result: readonly M['DroppedPartition'][] };
    partitionsHeld: { args: Record<string, never>; result: readonly M['HeldPartition'][] };
    defaultPartitionRows: { args: Record<string, never>; result: Scalars['Int'] };
    runId: { args: Record<string, never>; result: Maybe<Scalars['ID']> };
  };
  Query: {
    workflow: { args: QueryWorkflowArgs; result: Maybe<M['Workflow']> };
    workflows: { args: QueryWorkflowsArgs; result: M['WorkflowConnection'] };
    task: { args: QueryTaskArgs; result: Maybe<M['Task']> };
    definitions: { args: Record<string, never>; result: readonly M['WorkflowDefinition'][] };
    schedules: { args: Record<string, never>; result: readonly M['Schedule'][] };
    queues: { args: Record<string, never>; result: readonly M['Queue'][] };
    concurrencyGroups: {
      args: QueryConcurrencyGroupsArgs;
      result: readonly M['ConcurrencyGroup'][];
    };
    rateLimits: { args: QueryRateLimitsArgs; result: readonly M['RateLimitState'][] };
    workers: { args: QueryWorkersArgs; result: readonly M['Worker'][] };
  };
  Queue: {
    name: { args: Record<string, never>; result: Scalars['String'] };
    paused: { args: Record<string, never>; result: Maybe<M['QueuePause']> };
    history: { args: Record<string, never>; result: readonly M['QueuePauseEvent'][] };
  };
  QueuePause: {
    operator: { args: Record<string, never>; result: Scalars['String'] };
    reason: { args: Record<string, never>; result: Scalars['String'] };
    pausedAt: { args: Record<string, never>; result: Scalars['DateTime'] };
  };
  QueuePauseEvent: {
    kind: { args: Record<string, never>; result: QueuePauseEventKind };
    operator: { args: Record<string, never>; result: Scalars['String'] };
    reason: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    at: { args: Record<string, never>; result: Scalars['DateTime'] };
  };
  QueuePayload: {
    clientMutationId: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    queue: { args: Record<string, never>; result: M['Queue'] };
    changed: { args: Record<string, never>; result: Scalars['Boolean'] };
  };
  RateKeyState: {
    key: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    spent: { args: Record<string, never>; result: Scalars['Int'] };
    nextSlotAt: { args: Record<string, never>; result: Maybe<Scalars['DateTime']> };
    pausedUntil: { args: Record<string, never>; result: Maybe<Scalars['DateTime']> };
    pausedByTask: { args: Record<string, never>; result: Maybe<Scalars['ID']> };
    pausedByWorkflow: { args: Record<string, never>; result: Maybe<Scalars['ID']> };
    pausedReason: { args: Record<string, never>; result: Maybe<Scalars['String']> };
  };
  RateLimitState: {
    name: { args: Record<string, never>; result: Scalars['String'] };
    limit: { args: Record<string, never>; result: Scalars['Int'] };
    periodMs: { args: Record<string, never>; result: Scalars['Int'] };
    keys: { args: Record<string, never>; result: Scalars['Int'] };
    spent: { args: Record<string, never>; result: Scalars['Int'] };
    limitedKeys: { args: Record<string, never>; result: Scalars['Int'] };
    busiest: { args: Record<string, never>; result: readonly M['RateKeyState'][] };
  };
  RequeueDeadPayload: {
    clientMutationId: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    results: { args: Record<string, never>; result: readonly M['TaskOperationResult'][] };
  };
  RetryPolicy: {
    maxAttempts: { args: Record<string, never>; result: Scalars['Int'] };
    reentrant: { args: Record<string, never>; result: Scalars['Boolean'] };
    timeoutMs: { args: Record<string, never>; result: Scalars['Int'] };
    deadlineMs: { args: Record<string, never>; result: Maybe<Scalars['Int']> };
    initialIntervalMs: { args: Record<string, never>; result: Scalars['Int'] };
    backoffCoefficient: { args: Record<string, never>; result: Scalars['Float'] };
    maximumIntervalMs: { args: Record<string, never>; result: Scalars['Int'] };
  };
  Schedule: {
    name: { args: Record<string, never>; result: Scalars['String'] };
    workflow: { args: Record<string, never>; result: Scalars['String'] };
    cron: { args: Record<string, never>; result: Scalars['String'] };
    timezone: { args: Record<string, never>; result: Scalars['String'] };
    catchUp: { args: Record<string, never>; result: CatchUp };
    input: { args: Record<string, never>; result: Scalars['JSON'] };
    paused: { args: Record<string, never>; result: Maybe<M['SchedulePause']> };
    nextTickAt: { args: Record<string, never>; result: Maybe<Scalars['DateTime']> };
    lastTickAt: { args: Record<string, never>; result: Maybe<Scalars['DateTime']> };
    lastWorkflow: { args: Record<string, never>; result: Maybe<M['Workflow']> };
    history: { args: Record<string, never>; result: readonly M['ScheduleEvent'][] };
  };
  ScheduleEvent: {
    kind: { args: Record<string, never>; result: ScheduleEventKind };
    operator: { args: Record<string, never>; result: Scalars['String'] };
    reason: { args: Record<string, never>; result: Scalars['String'] };
    at: { args: Record<string, never>; result: Scalars['DateTime'] };
    workflow: { args: Record<string, never>; result: Maybe<M['Workflow']> };
  };
  SchedulePause: {
    at: { args: Record<string, never>; result: Scalars['DateTime'] };
    by: { args: Record<string, never>; result: Scalars['String'] };
    reason: { args: Record<string, never>; result: Scalars['String'] };
  };
  SchedulePayload: {
    clientMutationId: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    schedule: { args: Record<string, never>; result: M['Schedule'] };
    changed: { args: Record<string, never>; result: Scalars['Boolean'] };
  };
  SendEventPayload: {
    clientMutationId: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    eventId: { args: Record<string, never>; result: Scalars['ID'] };
    receivedAt: { args: Record<string, never>; result: Scalars['DateTime'] };
    deduplicated: { args: Record<string, never>; result: Scalars['Boolean'] };
    tasks: { args: Record<string, never>; result: readonly M['Task'][] };
  };
  StepChildCounts: {
    step: { args: Record<string, never>; result: Scalars['String'] };
    task: { args: Record<string, never>; result: M['Task'] };
    workflows: { args: Record<string, never>; result: readonly Scalars['String'][] };
    total: { args: Record<string, never>; result: Scalars['Int'] };
    succeeded: { args: Record<string, never>; result: Scalars['Int'] };
    failed: { args: Record<string, never>; result: Scalars['Int'] };
    unfinished: { args: Record<string, never>; result: Scalars['Int'] };
    allowedFailures: { args: Record<string, never>; result: Scalars['Int'] };
    detached: { args: Record<string, never>; result: Scalars['Int'] };
    byState: { args: Record<string, never>; result: readonly M['WorkflowStateCount'][] };
  };
  StepDefinition: {
    name: { args: Record<string, never>; result: Scalars['String'] };
    after: { args: Record<string, never>; result: readonly Scalars['String'][] };
    queue: { args: Record<string, never>; result: Scalars['String'] };
    retryPolicy: { args: Record<string, never>; result: M['RetryPolicy'] };
    event: { args: Record<string, never>; result: Maybe<M['EventStepDefinition']> };
    delayMs: { args: Record<string, never>; result: Maybe<Scalars['Int']> };
  };
  StepEdge: {
    from: { args: Record<string, never>; result: Scalars['String'] };
    to: { args: Record<string, never>; result: Scalars['String'] };
  };
  SubmitDebounce: {
    superseded: { args: Record<string, never>; result: readonly Scalars['ID'][] };
    dueAt: { args: Record<string, never>; result: Scalars['DateTime'] };
  };
  SubmitWorkflowPayload: {
    clientMutationId: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    workflow: { args: Record<string, never>; result: M['Workflow'] };
    deduplicated: { args: Record<string, never>; result: Scalars['Boolean'] };
    debounce: { args: Record<string, never>; result: Maybe<M['SubmitDebounce']> };
  };
  Subscription: {
    transitions: { args: SubscriptionTransitionsArgs; result: M['Transition'] };
  };
  Task: {
    id: { args: Record<string, never>; result: Scalars['ID'] };
    workflowId: { args: Record<string, never>; result: Scalars['ID'] };
    workflow: { args: Record<string, never>; result: M['Workflow'] };
    step: { args: Record<string, never>; result: Scalars['String'] };
    queue: { args: Record<string, never>; result: Scalars['String'] };
    state: { args: Record<string, never>; result: TaskState };
    attempt: { args: Record<string, never>; result: Scalars['Int'] };
    maxAttempts: { args: Record<string, never>; result: Scalars['Int'] };
    priority: { args: Record<string, never>; result: Scalars['Int'] };
    runAt: { args: Record<string, never>; result: Maybe<Scalars['DateTime']> };
    leaseHolder: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    leaseExpiresAt: { args: Record<string, never>; result: Maybe<Scalars['DateTime']> };
    lastErrorCategory: { args: Record<string, never>; result: Maybe<ErrorCategory> };
    lastError: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    progress: { args: Record<string, never>; result: Maybe<Scalars['JSON']> };
    replayCount: { args: Record<string, never>; result: Scalars['Int'] };
    output: { args: Record<string, never>; result: Maybe<Scalars['JSON']> };
    createdAt: { args: Record<string, never>; result: Scalars['DateTime'] };
    updatedAt: { args: Record<string, never>; result: Scalars['DateTime'] };
    transitions: { args: Record<string, never>; result: readonly M['Transition'][] };
    evidence: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    sending: { args: Record<string, never>; result: Scalars['Boolean'] };
    outbox: { args: Record<string, never>; result: readonly M['OutboxMessage'][] };
    waitingFor: { args: Record<string, never>; result: Maybe<M['WaitingFor']> };
    events: { args: Record<string, never>; result: readonly M['Event'][] };
    blocker: { args: Record<string, never>; result: Maybe<M['Blocker']> };
    concurrency: { args: Record<string, never>; result: Maybe<M['TaskConcurrency']> };
    attempts: { args: Record<string, never>; result: readonly M['Attempt'][] };
  };
  TaskConcurrency: {
    group: { args: Record<string, never>; result: Scalars['String'] };
    key: { args: Record<string, never>; result: Scalars['String'] };
    limit: { args: Record<string, never>; result: Scalars['Int'] };
  };
  TaskOperationPayload: {
    clientMutationId: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    result: { args: Record<string, never>; result: M['TaskOperationResult'] };
  };
  TaskOperationResult: {
    taskId: { args: Record<string, never>; result: Scalars['ID'] };
    state: { args: Record<string, never>; result: TaskState };
    changed: { args: Record<string, never>; result: Scalars['Boolean'] };
    reason: { args: Record<string, never>; result: ReasonCode };
    refusal: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    message: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    task: { args: Record<string, never>; result: M['Task'] };
  };
  Transition: {
    id: { args: Record<string, never>; result: Scalars['ID'] };
    workflowId: { args: Record<string, never>; result: Scalars['ID'] };
    taskId: { args: Record<string, never>; result: Maybe<Scalars['ID']> };
    step: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    from: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    to: { args: Record<string, never>; result: Scalars['String'] };
    reason: { args: Record<string, never>; result: ReasonCode };
    errorCategory: { args: Record<string, never>; result: Maybe<ErrorCategory> };
    errorSummary: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    actor: { args: Record<string, never>; result: Scalars['String'] };
    attempt: { args: Record<string, never>; result: Scalars['Int'] };
    at: { args: Record<string, never>; result: Scalars['DateTime'] };
    detail: { args: Record<string, never>; result: Maybe<Scalars['JSON']> };
  };
  TriggerSchedulePayload: {
    clientMutationId: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    schedule: { args: Record<string, never>; result: M['Schedule'] };
    workflow: { args: Record<string, never>; result: M['Workflow'] };
  };
  WaitingFor: {
    name: { args: Record<string, never>; result: Scalars['String'] };
    key: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    since: { args: Record<string, never>; result: Scalars['DateTime'] };
    timeoutAt: { args: Record<string, never>; result: Scalars['DateTime'] };
  };
  Worker: {
    holder: { args: Record<string, never>; result: Scalars['String'] };
    host: { args: Record<string, never>; result: Scalars['String'] };
    pid: { args: Record<string, never>; result: Scalars['Int'] };
    queues: { args: Record<string, never>; result: readonly M['WorkerQueue'][] };
    workflows: { args: Record<string, never>; result: readonly M['WorkerWorkflow'][] };
    version: { args: Record<string, never>; result: Scalars['String'] };
    engineVersion: { args: Record<string, never>; result: Scalars['String'] };
    appVersion: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    sweeper: { args: Record<string, never>; result: Scalars['Boolean'] };
    startedAt: { args: Record<string, never>; result: Scalars['DateTime'] };
    heartbeatAt: { args: Record<string, never>; result: Scalars['DateTime'] };
    staleAt: { args: Record<string, never>; result: Scalars['DateTime'] };
    live: { args: Record<string, never>; result: Scalars['Boolean'] };
  };
  WorkerQueue: {
    name: { args: Record<string, never>; result: Scalars['String'] };
    slots: { args: Record<string, never>; result: Scalars['Int'] };
  };
  WorkerWorkflow: {
    name: { args: Record<string, never>; result: Scalars['String'] };
    version: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    latest: { args: Record<string, never>; result: Scalars['Boolean'] };
    steps: { args: Record<string, never>; result: readonly Scalars['String'][] };
  };
  Workflow: {
    id: { args: Record<string, never>; result: Scalars['ID'] };
    name: { args: Record<string, never>; result: Scalars['String'] };
    version: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    state: { args: Record<string, never>; result: WorkflowState };
    input: { args: Record<string, never>; result: Scalars['JSON'] };
    idempotencyKey: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    attributes: { args: Record<string, never>; result: Scalars['JSON'] };
    createdAt: { args: Record<string, never>; result: Scalars['DateTime'] };
    updatedAt: { args: Record<string, never>; result: Scalars['DateTime'] };
    tasks: { args: Record<string, never>; result: readonly M['Task'][] };
    transitions: { args: Record<string, never>; result: readonly M['Transition'][] };
    explanation: { args: Record<string, never>; result: Scalars['String'] };
    blockers: { args: Record<string, never>; result: readonly M['Blocker'][] };
    parent: { args: Record<string, never>; result: Maybe<M['WorkflowParent']> };
    children: { args: WorkflowChildrenArgs; result: M['WorkflowConnection'] };
    childCounts: { args: Record<string, never>; result: readonly M['StepChildCounts'][] };
    result: { args: Record<string, never>; result: Maybe<Scalars['JSON']> };
  };
  WorkflowConnection: {
    edges: { args: Record<string, never>; result: readonly M['WorkflowEdge'][] };
    pageInfo: { args: Record<string, never>; result: M['PageInfo'] };
    totalCount: { args: Record<string, never>; result: Scalars['Int'] };
    totalCountCapped: { args: Record<string, never>; result: Scalars['Boolean'] };
  };
  WorkflowDefinition: {
    name: { args: Record<string, never>; result: Scalars['String'] };
    version: { args: Record<string, never>; result: Maybe<Scalars['String']> };
    defined: { args: Record<string, never>; result: Scalars['Boolean'] };
    latest: { args: Record<string, never>; result: Scalars['Boolean'] };
    status: { args: Record<string, never>; result: VersionStatus };
    inFlight: { args: Record<string, never>; result: Scalars['Int'] };
    workers: { args: Record<string, never>; result: readonly Scalars['String'][] };
    deadlineMs: { args: Record<string, never>; result: Maybe<Scalars['Int']> };
    steps: { args: Record<string, never>; result: readonly M['StepDefinition'][] };
    edges: { args: Record<string, never>; result: readonly M['StepEdge'][] };
  };
  WorkflowEdge: {
    cursor: { args: Record<string, never>; result: Scalars['String'] };
    node: { args: Record<string, never>; result: M['Workflow'] };
  };
  WorkflowParent: {
    workflow: { args: Record<string, never>; result: M['Workflow'] };
    step: { args: Record<string, never>; result: Scalars['String'] };
    task: { args: Record<string, never>; result: M['Task'] };
    index: { args: Record<string, never>; result: Scalars['Int'] };
    root: { args: Record<string, never>; result: M['Workflow'] };
    depth: { args: Record<string, never>; result: Scalars['Int'] };
    detached: { args: Record<string, never>; result: Scalars['Boolean'] };
  };
  WorkflowStateCount: {
    state: { args: Record<string, never>; result: WorkflowState };
    count: { args: Record<string, never>; result: Scalars['Int'] };
  };
}
