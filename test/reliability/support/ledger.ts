/**
 * The handler-start ledger: worker processes write a row when a step handler starts, and
 * another when a non-reentrant step passed its effect boundary and is about to perform its
 * effect. It lives in a table the test owns (never the engine's), written in its own
 * connection and committed before the handler goes on, so a SIGKILL right after cannot lose
 * it: the invariants (invariants.ts) compare it with what the engine promised.
 */
import type { StepContext } from '@causeway/workflow';
import pg from 'pg';

export const ledgerTable = 'reliability_handler_starts';

export type LedgerKind = 'start' | 'effect';

export interface LedgerRow {
  readonly kind: LedgerKind;
  readonly task_id: string;
  readonly workflow_id: string;
  readonly step: string;
  readonly attempt: number;
  readonly reentrant: boolean;
  readonly holder: string;
  readonly pid: number;
}

/** Creates the ledger table (idempotent); the test calls it before any worker starts. */
export async function createLedger(databaseUrl: string): Promise<void> {
  // Plain pg, not the test helpers: worker processes import this file outside vitest.
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `create table if not exists ${ledgerTable} (
       id bigserial primary key,
       kind text not null check (kind in ('start', 'effect')),
       task_id uuid not null,
       workflow_id uuid not null,
       step text not null,
       attempt int not null,
       reentrant boolean not null,
       holder text not null,
       pid int not null,
       at timestamptz not null default clock_timestamp())`,
    );
    // The invariants join it with the log by task: 10^5 rows must not mean a nested loop.
    await client.query(
      `create index if not exists ${ledgerTable}_task on ${ledgerTable} (task_id, attempt)`,
    );
  } finally {
    await client.end();
  }
}

/**
 * The worker side: one connection of its own; each row is committed before `record` resolves.
 * Rows recorded while an insert is in flight go together in the next one (a group commit), so
 * the ledger costs one round trip per batch of concurrent handlers, not one per handler.
 */
export class LedgerWriter {
  readonly #client: pg.Client;
  readonly #connected: Promise<unknown>;
  #holder = 'unknown';
  #waiting: { row: unknown[]; done: () => void; failed: (error: unknown) => void }[] = [];
  #flushing = false;

  constructor(databaseUrl: string) {
    this.#client = new pg.Client({
      connectionString: databaseUrl,
      application_name: 'reliability-ledger',
    });
    this.#connected = this.#client.connect();
  }

  /** The engine's holder id, once it is known (rows before that say `unknown`). */
  set holder(holder: string) {
    this.#holder = holder;
  }

  record(kind: LedgerKind, ctx: StepContext<unknown>, reentrant: boolean): Promise<void> {
    const row = [
      kind,
      ctx.taskId,
      ctx.workflowId,
      ctx.step,
      ctx.attempt,
      reentrant,
      this.#holder,
      process.pid,
    ];
    return new Promise<void>((done, failed) => {
      this.#waiting.push({ row, done, failed });
      void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    if (this.#flushing) return;
    this.#flushing = true;
    try {
      await this.#connected.catch((error: unknown) => {
        for (const entry of this.#waiting.splice(0)) entry.failed(error);
      });
      while (this.#waiting.length > 0) {
        const batch = this.#waiting;
        this.#waiting = [];
        const values = batch.map(
          (_, index) =>
            `(${Array.from({ length: 8 }, (_, column) => `$${index * 8 + column + 1}`).join(', ')})`,
        );
        try {
          // Autocommit: the rows are durable in PostgreSQL when the insert answers.
          await this.#client.query(
            `insert into ${ledgerTable} (kind, task_id, workflow_id, step, attempt, reentrant, holder, pid)
             values ${values.join(', ')}`,
            batch.flatMap((entry) => entry.row),
          );
          for (const entry of batch) entry.done();
        } catch (error) {
          for (const entry of batch) entry.failed(error);
        }
      }
    } finally {
      this.#flushing = false;
    }
  }

  async close(): Promise<void> {
    await this.#connected;
    await this.#client.end();
  }
}
