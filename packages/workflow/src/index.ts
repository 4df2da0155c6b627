/**
 * `@causeway/workflow`: what a user writes workflows with (docs/rules.md, "Public surfaces").
 * Every name here is a contract: add, never rename. What only Causeway's own packages need
 * (the state machine, admission checks, registries) is in `@causeway/workflow/internal`.
 *
 * Here: declaring workflows, steps, event steps, map steps and schedules; what a step's `run`
 * gets and may return (child workflows among it) or throw; the closed sets a history is told
 * in (states, reason codes, error categories, blockers: docs/state-machine.md); reading a
 * definition or a history.
 * test/workflow/public-surface.test.ts pins this list.
 */

export {
  type AttemptOutcome,
  attemptOutcomes,
  type StaleResult,
  type TaskAttempt,
} from './attempt-ledger';
export type { AttributeValue, WorkflowAttributes } from './attributes';
export { type Blocker, type BlockerCode, blockerCodes } from './blocker-codes';
export {
  type ChildOutcome,
  type MapContext,
  type StartChildrenOptions,
  startChild,
  startChildren,
  type Tolerance,
} from './child-workflows';
export type {
  ConcurrencyKey,
  ConcurrencyKeyContext,
} from './concurrency-key';
export type { Debounce } from './debounce';
export type { DeepReadonly } from './deep-freeze';
export {
  DefinitionError,
  defineWorkflow,
  type StepDefinition,
  type StepOptions,
  type StepReturn,
  step,
  type WorkflowDefinition,
  type WorkflowOptions,
  type WorkflowStep,
} from './define-workflow';
export { describeWorkflow, workflowMermaid } from './describe-workflow';
export {
  type ErrorCategory,
  errorCategories,
  nonRetryableErrorCategories,
  transientErrorCategories,
} from './error-categories';
export { type EventKeyContext, type EventStepOptions, event } from './event-step';
export { type Explanation, type ExplanationNote, explain } from './explain';
export {
  type ReasonCode,
  reasonCodes,
  type TaskState,
  taskStates,
  terminalTaskStates,
  terminalWorkflowStates,
  type WorkflowState,
  workflowStates,
} from './machine-table';
export { map } from './map-step';
export { type PayloadReference, payloadRef, payloadReference } from './payload-reference';
export type { RateLimit, StepRateLimit, TaskRate } from './rate-limit';
export { rateLimit } from './rate-limit-declarations';
export type { BackoffPolicy, RetryPolicy } from './retry-policy';
export {
  type CatchUp,
  catchUpModes,
  type ScheduleDefinition,
  type ScheduleOptions,
  schedule,
} from './schedule';
export type { StepContext, StepLogger } from './step-context';
export { StepError } from './step-error';
export {
  type AwaitReceipt,
  awaitReceipt,
  type SendRequest,
  type SnoozeRequest,
  send,
  snooze,
} from './step-results';
export type { Transition } from './transition';
export type { TypedStepDefinition } from './typed-step';
export type { StoredJson, UpstreamResult } from './upstream-result';
export {
  type BuilderStepOptions,
  type TypedStepContext,
  type WorkflowBuilder,
  type WorkflowHeader,
  type WorkflowStepDefinition,
  workflow,
} from './workflow-builder';
