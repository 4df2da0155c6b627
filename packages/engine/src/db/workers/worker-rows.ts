import type { Selectable } from 'kysely';
import type { WorkerTable } from '../schema';

/** What an engine's workers serve, as its registry row says (what the registration writes). */
export interface WorkerRegistration {
  readonly holder: string;
  readonly host: string;
  readonly pid: number;
  readonly queues: readonly { readonly name: string; readonly slots: number }[];
  /**
   * Each version it defines (R54) with its steps, and whether new submits take it (the name's
   * latest); rows of engines from before versions have neither.
   */
  readonly workflows: readonly {
    readonly name: string;
    readonly version?: string;
    readonly latest?: boolean;
    readonly steps: readonly string[];
  }[];
  readonly sweeper: boolean;
  readonly engineVersion: string;
  readonly appVersion: string | null;
}

/** A registry row as read, with whether it still heartbeats within its age-out. */
export interface WorkerRecord extends WorkerRegistration {
  readonly startedAt: Date;
  readonly heartbeatAt: Date;
  /** Past this (the last heartbeat plus the worker's own age-out), it counts as gone. */
  readonly staleAt: Date;
  readonly live: boolean;
}

export function workerFromRow(row: Selectable<WorkerTable> & { live: boolean }): WorkerRecord {
  return {
    holder: row.holder,
    host: row.host,
    pid: row.pid,
    queues: row.queues,
    workflows: row.workflows,
    sweeper: row.sweeper,
    engineVersion: row.engine_version,
    appVersion: row.app_version,
    startedAt: row.started_at,
    heartbeatAt: row.heartbeat_at,
    staleAt: row.stale_at,
    live: row.live,
  };
}
