import pg from 'pg';
import { type EmbeddedServer, startEmbeddedPostgres } from '../scripts/embedded-postgres';

/** The PostgreSQL server the benchmark creates its throwaway databases on. */
export interface BenchServer {
  readonly kind: 'embedded' | 'DATABASE_URL';
  readonly version: string;
  /** Superuser URL of the server (PgBouncer logs in with its credentials). */
  readonly adminUrl: string;
  /** Settings that change what a commit costs; recorded with every run. */
  readonly settings: Readonly<Record<string, string>>;
  /** Creates an empty database (dropping a leftover of the same name) and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Drops the database, closing connections that are still open to it. */
  dropDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
}

const recordedSettings = ['fsync', 'synchronous_commit', 'full_page_writes', 'shared_buffers'];

/** DATABASE_URL when set, otherwise a throwaway embedded PostgreSQL (deleted on stop). */
export async function startServer(
  repoRoot: string,
  startEmbedded: () => Promise<EmbeddedServer> = () =>
    startEmbeddedPostgres({ repoRoot, label: '[bench]' }),
): Promise<BenchServer> {
  const external = process.env.DATABASE_URL;
  const embedded = external === undefined || external === '' ? await startEmbedded() : null;
  const adminUrl = embedded?.url ?? (external as string);
  const settings: Record<string, string> = {};
  let version = '';
  await withClient(adminUrl, async (client) => {
    version = (await client.query('show server_version')).rows[0].server_version;
    for (const name of recordedSettings) {
      settings[name] = (await client.query(`show ${name}`)).rows[0][name];
    }
  });
  const checkName = (name: string) => {
    // Every benchmark database is bench_*; nothing else on a shared server is touched.
    if (!/^bench_[a-z0-9_]{1,57}$/.test(name)) throw new Error(`refusing database name ${name}`);
  };
  return {
    kind: embedded === null ? 'DATABASE_URL' : 'embedded',
    version,
    adminUrl,
    settings,
    async createDatabase(name) {
      checkName(name);
      await withClient(adminUrl, async (client) => {
        await client.query(`drop database if exists ${name} with (force)`);
        await client.query(`create database ${name}`);
      });
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      return url.toString();
    },
    async dropDatabase(name) {
      checkName(name);
      await withClient(adminUrl, (client) =>
        client.query(`drop database if exists ${name} with (force)`),
      );
    },
    stop: async () => embedded?.stop(),
  };
}

export async function withClient<T>(
  url: string,
  fn: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A small pool for the orchestrator's own statements (counts, ANALYZE, CHECKPOINT). */
export function adminPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => {});
  return pool;
}

/**
 * Starts a timed phase from a fresh checkpoint, so one triggered by an earlier run's WAL is
 * less likely to land inside it (as the peers' harness does). Changes no setting.
 */
export async function checkpoint(pool: pg.Pool): Promise<void> {
  await pool.query('checkpoint');
}
