export {
  type Channel,
  type DeliveryResult,
  type HttpChannelOptions,
  httpChannel,
  type OutboxMessage,
} from './channels';
export { transitionsChannel } from './db/channels';
export {
  createEngine,
  type Engine,
  type EngineOptions,
  type OutboxView,
  type TaskView,
  type WorkflowView,
} from './engine';
export { EngineError, type EngineErrorCode, engineErrorCodes } from './errors';
export type { Logger } from './logger';
export * from './read-model';
export { Notifier } from './runtime/notifier';
export type {
  ReceiptOutcome,
  Requester,
  RequeueRequest,
  TaskAnswer,
  WorkflowCancelAnswer,
} from './runtime/operations';
export { CancelConfirmed, LeaseLost, StepAbort } from './runtime/step-signals';
export type { SubmitOptions, SubmitRequest, SubmitResult } from './runtime/submit';
export type { StopOptions, WorkerHandle, WorkerOptions } from './runtime/worker';
