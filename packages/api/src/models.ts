import type {
  ConcurrencyGroupView,
  ConcurrencyKeyLoad,
  DefinitionVersionView,
  DroppedPartition,
  HeldPartition,
  OutboxMessageRecord,
  ParentView,
  PurgeFinishedAnswer,
  QueuePause,
  QueuePauseEvent,
  QueueView,
  RateKeyState,
  RateLimitState,
  ScheduleEventRecord,
  SchedulePause,
  ScheduleView,
  StepChildCounts,
  StoredEvent,
  TaskAnswer,
  TaskRecord,
  WorkerView,
  WorkflowRecord,
} from '@causeway/engine';
import type {
  Blocker,
  EventWait,
  RetryPolicy,
  TaskAttempt,
  Transition,
  WorkflowDefinition,
  WorkflowStep,
} from '@causeway/workflow/internal';
import type { ApiContext } from './context';
import type { ModelMap } from './generated/schema-types';
import type { Resolvers } from './resolver-types';

/** A count that stopped at a cap: `value` is exact unless `capped`. */
export interface BoundedCount {
  readonly value: number;
  readonly capped: boolean;
}

/** The TypeScript value each GraphQL object type resolves from. */
export interface Models extends ModelMap {
  readonly Query: unknown;
  readonly Mutation: unknown;
  readonly Subscription: unknown;
  readonly Workflow: WorkflowRecord;
  readonly Task: TaskRecord;
  readonly Transition: Transition;
  readonly Attempt: TaskAttempt;
  readonly OutboxMessage: OutboxMessageRecord;
  readonly WorkflowConnection: {
    readonly edges: readonly { readonly cursor: string; readonly node: WorkflowRecord }[];
    readonly pageInfo: { readonly hasNextPage: boolean; readonly endCursor: string | null };
    /** The bounded count of the filter's rows, read once for totalCount and totalCountCapped. */
    readonly count: () => Promise<BoundedCount>;
  };
  readonly WorkflowEdge: { readonly cursor: string; readonly node: WorkflowRecord };
  readonly PageInfo: { readonly hasNextPage: boolean; readonly endCursor: string | null };
  /** One version of a workflow (R54), with its step graph where this process defines it. */
  readonly WorkflowDefinition: Omit<DefinitionVersionView, 'defined'> & {
    readonly defined: boolean;
    readonly deadlineMs: WorkflowDefinition['deadlineMs'];
    readonly steps: readonly WorkflowStep<unknown>[];
  };
  readonly StepDefinition: WorkflowStep<unknown>;
  readonly StepEdge: { readonly from: string; readonly to: string };
  readonly RetryPolicy: RetryPolicy;
  readonly EventStepDefinition: EventWait;
  readonly WaitingFor: {
    readonly name: string;
    readonly key: string | null;
    readonly since: Date;
    readonly timeoutAt: Date;
  };
  readonly Event: StoredEvent;
  readonly SendEventPayload: {
    readonly clientMutationId: string | null;
    readonly eventId: string;
    readonly receivedAt: Date;
    readonly deduplicated: boolean;
    readonly taskIds: readonly string[];
  };
  readonly SubmitWorkflowPayload: {
    readonly clientMutationId: string | null;
    readonly workflowId: string;
    readonly deduplicated: boolean;
    readonly debounce: Models['SubmitDebounce'] | null;
  };
  readonly SubmitDebounce: { readonly superseded: readonly string[]; readonly dueAt: Date };
  readonly CancelWorkflowPayload: {
    readonly clientMutationId: string | null;
    readonly workflowId: string;
    readonly state: WorkflowRecord['state'];
    readonly changed: boolean;
  };
  readonly TaskOperationResult: TaskAnswer;
  readonly TaskOperationPayload: {
    readonly clientMutationId: string | null;
    readonly result: TaskAnswer;
  };
  readonly RequeueDeadPayload: {
    readonly clientMutationId: string | null;
    readonly results: readonly TaskAnswer[];
  };
  readonly Schedule: ScheduleView;
  readonly SchedulePause: SchedulePause;
  readonly ScheduleEvent: ScheduleEventRecord;
  readonly SchedulePayload: {
    readonly clientMutationId: string | null;
    readonly schedule: ScheduleView;
    readonly changed: boolean;
  };
  readonly Blocker: Blocker;
  readonly WorkflowParent: Omit<ParentView, 'name' | 'step'>;
  readonly StepChildCounts: StepChildCounts;
  readonly WorkflowStateCount: { readonly state: WorkflowRecord['state']; readonly count: number };
  readonly Worker: WorkerView;
  readonly WorkerQueue: WorkerView['queues'][number];
  readonly WorkerWorkflow: WorkerView['workflows'][number];
  readonly DroppedPartition: DroppedPartition;
  readonly HeldPartition: Omit<HeldPartition, 'liveSample' | 'youngSample'> & {
    readonly liveWorkflowIds: readonly string[];
    readonly youngWorkflowIds: readonly string[];
  };
  readonly PurgeFinishedPayload: Omit<
    PurgeFinishedAnswer,
    'partitionsHeld' | 'defaultPartition'
  > & {
    readonly clientMutationId: string | null;
    readonly partitionsHeld: readonly Models['HeldPartition'][];
    readonly defaultPartitionRows: number;
  };
  readonly ConcurrencyGroup: ConcurrencyGroupView;
  readonly ConcurrencyKey: ConcurrencyKeyLoad;
  readonly ConcurrencySlotHolder: ConcurrencyKeyLoad['holders'][number];
  readonly TaskConcurrency: NonNullable<TaskRecord['concurrency']>;
  readonly RateLimitState: RateLimitState;
  readonly RateKeyState: RateKeyState;
  readonly Queue: QueueView;
  readonly QueuePause: QueuePause;
  readonly QueuePauseEvent: QueuePauseEvent;
  readonly QueuePayload: {
    readonly clientMutationId: string | null;
    readonly queue: QueueView;
    readonly changed: boolean;
  };
  readonly TriggerSchedulePayload: {
    readonly clientMutationId: string | null;
    readonly schedule: ScheduleView;
    readonly workflowId: string;
  };
}

export type ApiResolvers = Resolvers<Models, ApiContext>;
