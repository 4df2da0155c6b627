import { type Kysely, sql } from 'kysely';
import type { CausewayDatabase } from '../schema';

/**
 * Where a server stands in the write-ahead log. On a primary, `lsn` is the insert position:
 * past the commit record of every transaction that has committed. On a streaming replica
 * (in recovery), it is the replay position: every commit at or below it is visible there.
 * `replayedAt` is a replica's last replayed commit time (null on a primary), for lag in seconds.
 */
export interface WalPosition {
  readonly inRecovery: boolean;
  /** An LSN as PostgreSQL prints it (`16/B374D848`); null on a replica that replayed nothing. */
  readonly lsn: string | null;
  readonly replayedAt: Date | null;
  /** The server's clock at the read (lag in seconds is measured on the replica's own clock). */
  readonly now: Date;
}

export async function walPositionRead(db: Kysely<CausewayDatabase>): Promise<WalPosition> {
  const { rows } = await sql<{
    in_recovery: boolean;
    lsn: string | null;
    replayed_at: Date | null;
    now: Date;
  }>`
    select pg_is_in_recovery() as in_recovery,
           (case when pg_is_in_recovery() then pg_last_wal_replay_lsn()
                 else pg_current_wal_insert_lsn() end)::text as lsn,
           pg_last_xact_replay_timestamp() as replayed_at,
           clock_timestamp() as now`.execute(db);
  const row = rows[0] as {
    in_recovery: boolean;
    lsn: string | null;
    replayed_at: Date | null;
    now: Date;
  };
  return {
    inRecovery: row.in_recovery,
    lsn: row.lsn,
    replayedAt: row.replayed_at,
    now: row.now,
  };
}
