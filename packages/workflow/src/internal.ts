/**
 * `@causeway/workflow/internal`: everything the domain exports, for Causeway's own packages
 * (the engine, the API, the CLI), its scripts, benchmarks and tests. The machine, its edge
 * table, the admission checks and the other internals live here and may change in any
 * release; users import the public surface, `@causeway/workflow` (index.ts), which this
 * entry includes.
 */
export * from './actors';
export * from './admission';
export * from './aggregate';
export * from './attempt-ledger';
export * from './attribute-admission';
export * from './attribute-text';
export * from './attributes';
export * from './blocker-codes';
export type {
  BlockerInput,
  BlockerTask,
  ChildrenFacts,
  ConcurrencyFacts,
  OutboxSending,
  QueueLoad,
  QueuePause,
  RateFacts,
  RateKeyPause,
  RegisteredWorker,
} from './blocker-input';
export type { SweeperThen } from './blocker-outcomes';
export * from './blockers';
export * from './child-workflows';
export * from './children-decisions';
export * from './claim-outcomes';
export * from './complete-outcomes';
export * from './concurrency-key';
export * from './cron';
export * from './debounce';
export * from './deep-freeze';
export * from './define-workflow';
export * from './describe-workflow';
export * from './edge-effects';
export * from './edge-lookup';
export * from './error-categories';
export * from './event-admission';
export * from './event-outcomes';
export * from './event-step';
export * from './explain';
export * from './explain-pause';
export * from './explain-rate';
export * from './machine-choice';
export * from './machine-table';
export * from './map-step';
export * from './map-step-options';
export * from './one-statement-derivation';
export * from './one-step-child';
export * from './payload-reference';
export * from './rate-limit';
export * from './rate-limit-declarations';
export * from './retry-policy';
export * from './schedule';
export * from './schedule-origin';
export * from './sha256';
export * from './step-context';
export * from './step-error';
export * from './step-input';
export * from './step-results';
export * from './task-events';
export * from './task-machine';
export * from './task-priority';
export * from './task-snapshot';
export * from './transition';
export * from './version-status';
export * from './workflow-builder';
export * from './workflow-registry';
export * from './workflow-result';
export * from './workflow-run';
export * from './workflow-version';
