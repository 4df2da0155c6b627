import {
  type CausewayDatabase,
  createReadModel,
  type Logger,
  type ReadModel,
} from '@causeway/engine';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { parseLsn } from './lsn';
import { ReadRouter } from './read-router';

export interface ReplicaOptions {
  /** A streaming (physical) replica of the engine's database, e.g. a hot standby. */
  readonly databaseUrl: string;
  /** Connections to the replica. Default 10. */
  readonly poolSize?: number;
  /** How often the replica's replay position is read in the background. Default 250 ms. */
  readonly pollIntervalMs?: number;
}

/** How far the replica is behind the primary, read at once on both. */
export interface ReplicaLag {
  /** The replica's host:port/database (never its credentials). */
  readonly replica: string;
  /** WAL bytes the primary has written that the replica has not replayed. */
  readonly bytes: number;
  /** Seconds since the replica's last replayed commit, while it is behind; 0 when caught up. */
  readonly seconds: number;
}

/** The API's side of a read replica: its pool, its read model and the router deciding reads. */
export interface ReplicaConnection {
  readonly readModel: ReadModel;
  readonly router: ReadRouter;
  lag(): Promise<ReplicaLag>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export function connectReplica(
  options: ReplicaOptions,
  primary: ReadModel,
  logger: Logger,
): ReplicaConnection {
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10 });
  pool.on('error', (error) => logger.warn({ err: error }, 'idle replica connection failed'));
  // A replica that stops while a client is checked out between statements reports it on the
  // client, not the pool: unheard, it would kill the API. The next statement fails and the
  // router reads the primary.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<CausewayDatabase>({ dialect: new PostgresDialect({ pool }) });
  const readModel = createReadModel(db);
  const name = replicaName(options.databaseUrl);
  const router = new ReadRouter({
    primary,
    replica: readModel,
    logger,
    ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
  });
  return {
    readModel,
    router,
    async lag() {
      // The replica first: the primary's later position can only make the lag look larger.
      const replica = await readModel.walPosition();
      const written = await primary.walPosition();
      const behind = (parseLsn(written.lsn) ?? 0n) - (parseLsn(replica.lsn) ?? 0n);
      const bytes = behind > 0n ? Number(behind) : 0;
      const seconds =
        bytes === 0 || replica.replayedAt === null
          ? 0
          : Math.max(0, (replica.now.getTime() - replica.replayedAt.getTime()) / 1_000);
      return { replica: name, bytes, seconds };
    },
    start: () => router.start(),
    async close() {
      router.close();
      await db.destroy();
    },
  };
}

function replicaName(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    return `${url.host}${url.pathname}`;
  } catch {
    return 'replica';
  }
}
