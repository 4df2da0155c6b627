export type { StoredEvent } from './db/events/event-queries';
export { transitionsChannel } from './db/notify-channels';
export { isDatabaseUnavailableError } from './db/pg-errors';
export type { QueuePause, QueuePauseEvent } from './db/queues/queue-pauses';
export type {
  ScheduleEventKind,
  ScheduleEventRecord,
  SchedulePause,
} from './db/schedules/schedule-rows';
export { scheduleEventKinds } from './db/schedules/schedule-rows';
export {
  createEngine,
  type DefinitionVersionView,
  type Engine,
  type EngineOptions,
  type OutboxView,
  type TaskView,
  type WorkflowView,
} from './engine';
export { EngineError, type EngineErrorCode, engineErrorCodes } from './errors';
export type { Logger } from './logger';
export * from './read-model';
export {
  type ConcurrencyGroupsRequest,
  type ConcurrencyGroupView,
  type ConcurrencyKeyLoad,
  type DefinedConcurrencyGroup,
  definedConcurrencyGroups,
} from './runtime/concurrency/concurrency-groups';
export type {
  DeliveredTask,
  EventToSend,
  SendEventAnswer,
  SendEventOptions,
} from './runtime/events/send-event';
export { Notifier } from './runtime/notifier';
export type {
  ReceiptOutcome,
  Requester,
  RequeueRequest,
  TaskAnswer,
  WorkflowCancelAnswer,
} from './runtime/operations/operations';
export type { SubmitOptions, SubmitRequest, SubmitResult } from './runtime/operations/submit';
export {
  type Channel,
  type DeliveryResult,
  type HttpChannelOptions,
  httpChannel,
  type OutboxMessage,
} from './runtime/outbox/delivery-channels';
export type {
  QueueAnswer,
  QueuePauseRequest,
  QueueResumeRequest,
  QueueView,
} from './runtime/queues/queue-operations';
export type {
  RateKeyState,
  RateLimitOperations,
  RateLimitState,
  RateLimitsRequest,
} from './runtime/rate/rate-limit-states';
export type { WorkerView } from './runtime/registry/worker-views';
export type {
  DroppedPartition,
  HeldPartition,
  PurgeFinishedAnswer,
} from './runtime/retention/purge-finished';
export type { PurgeFinishedRequest } from './runtime/retention/purge-request';
export type { RetentionRun } from './runtime/retention/retention-runs';
export type {
  ScheduleAnswer,
  ScheduleRequest,
  ScheduleTriggerAnswer,
  ScheduleView,
} from './runtime/schedules/schedule-operations';
export type { ScheduledSubmission } from './runtime/schedules/scheduler';
export {
  type HandlerOutcome,
  type HandlerRun,
  type HandlerRunListener,
  handlerOutcomeMeanings,
  handlerOutcomes,
} from './runtime/worker/handler-runs';
export { CancelConfirmed, LeaseLost, StepAbort } from './runtime/worker/step-signals';
export type { StopOptions, WorkerHandle, WorkerOptions } from './runtime/worker/worker';
