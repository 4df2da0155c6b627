import type { WorkflowRegistry } from '@causeway/workflow/internal';
import type { Kysely } from 'kysely';
import type { CausewayDatabase } from '../db/schema';
import type { Logger } from '../logger';
import type { ApplyContext } from './decision/event-request';
import type { Notifier } from './notifier';
import type { Channel } from './outbox/delivery-channels';
import type { WorkerRegistry } from './registry/worker-registry';
import type { HandlerRunObservers } from './worker/handler-runs';

/** What the runtime parts of one engine share. */
export interface EngineContext {
  readonly db: Kysely<CausewayDatabase>;
  readonly definitions: WorkflowRegistry;
  readonly apply: ApplyContext;
  /** host/pid/boot id of this engine (R7). */
  readonly holder: string;
  /** The root logger; task lines are children of it with their own fields. */
  readonly rootLogger: Logger;
  /** Engine-level lines (null workflow, task and attempt). */
  readonly logger: Logger;
  readonly leaseMs: number;
  readonly sweepIntervalMs: number;
  readonly pollIntervalMs: number;
  readonly notifier: Notifier;
  /** The engine's row in the worker registry, joined by each worker it starts. */
  readonly registry: WorkerRegistry;
  /** Outbox channels by name (R22). */
  readonly channels: ReadonlyMap<string, Channel>;
  /** Who hears of each handler run of this engine's workers (the API's metrics). */
  readonly handlerRuns: HandlerRunObservers;
}
