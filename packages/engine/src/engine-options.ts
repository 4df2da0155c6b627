import type {
  RateLimit,
  ScheduleDefinition,
  WorkflowDefinition,
} from '@causeway/workflow/internal';
import type { Logger } from './logger';
import type { Channel } from './runtime/outbox/delivery-channels';

/** What `createEngine` takes. */
export interface EngineOptions {
  /** Postgres connection string; defaults to the DATABASE_URL environment variable. */
  readonly databaseUrl?: string;
  /**
   * The server itself when `databaseUrl` is a transaction pooler (PgBouncer
   * `pool_mode=transaction`): LISTEN and `migrate()` (an advisory lock held by the connection)
   * need a connection of their own for longer than a transaction. Default `databaseUrl`.
   */
  readonly directUrl?: string;
  /**
   * Sends the hot statements as named prepared statements (each connection plans them once),
   * and lets connections keep the engine's session functions (`pg_temp`). Turn off behind a
   * pooler that does not keep a client on one server connection, such as PgBouncer in
   * transaction mode. Default true.
   */
  readonly preparedStatements?: boolean;
  // biome-ignore lint/suspicious/noExplicitAny: each definition has its own input schema type.
  readonly workflows: readonly WorkflowDefinition<any>[];
  readonly logger?: Logger;
  /** Lease length (R7); renewal runs every third of it. Default 30 s. */
  readonly leaseMs?: number;
  /** How often a worker's sweeper looks for expired leases and deadlines. Default 1 s. */
  readonly sweepIntervalMs?: number;
  /** Polling fallback when no wake-up arrives (R5). Default 1 s. */
  readonly pollIntervalMs?: number;
  /** Per-queue admission caps: the most ready tasks a queue may hold (seed 002). */
  readonly queues?: Readonly<Record<string, { readonly maxBacklog?: number }>>;
  /** Connections in the engine's pool. Default 10. */
  readonly poolSize?: number;
  /** The service's root signal (R6): aborting it shuts every worker down gracefully. */
  readonly signal?: AbortSignal;
  /** Outbox channels that steps may `send(...)` to (R22), e.g. `httpChannel({...})`. */
  readonly channels?: readonly Channel[];
  /** Cron schedules (R40), `schedule({...})`: written to the database when the engine starts. */
  readonly schedules?: readonly ScheduleDefinition[];
  /** How often the engine's worker registry row is heartbeated while a worker runs. Default 5 s. */
  readonly workerHeartbeatMs?: number;
  /**
   * How long after its last heartbeat a worker counts as gone (blockers then call its leases
   * stale). Default 30 s: six heartbeats, so a GC pause or a slow statement never makes a live
   * worker look gone, and the default lease length, so "its worker is gone" and "its lease has
   * run out" agree. At least twice `workerHeartbeatMs`.
   */
  readonly workerAgeOutMs?: number;
  /** The application's version, shown in the worker registry beside the engine's. */
  readonly appVersion?: string;
  /**
   * Rate limits (R51), `rateLimit({ name, limit, periodMs })`, that steps spend by name
   * (`step({ rateLimit: { name, key?, cost? } })`); every name a step spends is declared here.
   */
  readonly rateLimits?: readonly RateLimit[];
}
