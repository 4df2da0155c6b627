import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { findFreePort } from '../../scripts/embedded-postgres';
import { query } from '../helpers/engine';

const run = promisify(execFile);

/**
 * A primary and a streaming read replica of it (physical replication, hot standby), both
 * throwaway clusters of the embedded-postgres binaries, whatever DATABASE_URL names: a
 * replica needs a primary configured for it (replication connections in pg_hba.conf, WAL
 * senders) and a second data directory fed from the first, which a shared test server
 * cannot offer. The package ships initdb, pg_ctl and postgres but no pg_basebackup, so the
 * base backup is a file-system copy of the primary's data directory taken while it is shut
 * down (a consistent backup by PostgreSQL's own definition); `standby.signal` and
 * `primary_conninfo` then make the copy a standby streaming from the primary.
 */
export interface ReplicaPair {
  /** Superuser URL of the primary's `causeway` database. */
  readonly primaryUrl: string;
  /** Superuser URL of the same database on the replica (read-only: in recovery). */
  readonly replicaUrl: string;
  /** Resolves once the replica has replayed everything the primary had written when called. */
  caughtUp(timeoutMs?: number): Promise<void>;
  /** The replica's server log so far (its errors, e.g. refused writes). */
  replicaLog(): Promise<string>;
  /** Stops the replica (fast shutdown); `stop()` still cleans up. */
  stopReplica(): Promise<void>;
  /** Stops both servers and deletes their directories. */
  stop(): Promise<void>;
}

const database = 'causeway';

export async function startReplicaPair(): Promise<ReplicaPair> {
  const bin = await binaries();
  const owner = await serverUser();
  const root = await mkdtemp(join(tmpdir(), 'causeway-replica-'));
  if (owner !== null) await chown(root, owner.uid, owner.gid);
  const as = owner === null ? {} : { uid: owner.uid, gid: owner.gid };
  const exec = (file: string, args: string[]) => run(file, args, { ...as, timeout: 60_000 });
  const password = randomBytes(12).toString('hex');
  const primaryDir = join(root, 'primary');
  const replicaDir = join(root, 'replica');
  const [primaryPort, replicaPort] = [await findFreePort(), await findFreePort()];
  const running = new Set<string>();
  const kill = () => {
    for (const dir of running) killSync(dir);
  };
  process.on('exit', kill);

  const start = async (dir: string, port: number) => {
    await exec(bin.pgCtl, [
      'start',
      '--wait',
      '--timeout=60',
      `--pgdata=${dir}`,
      `--log=${join(root, `${port}.log`)}`,
      `--options=${serverFlags(port).join(' ')}`,
    ]);
    running.add(dir);
  };
  const stopServer = async (dir: string) => {
    if (!running.has(dir)) return;
    await exec(bin.pgCtl, ['stop', '--wait', '--mode=fast', `--pgdata=${dir}`]);
    running.delete(dir);
  };
  const url = (port: number, name = database) =>
    `postgres://postgres:${password}@127.0.0.1:${port}/${name}`;

  try {
    const passwordFile = join(root, 'password');
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    if (owner !== null) await chown(passwordFile, owner.uid, owner.gid);
    await exec(bin.initdb, [
      `--pgdata=${primaryDir}`,
      '--auth=scram-sha-256',
      '--username=postgres',
      `--pwfile=${passwordFile}`,
      '--encoding=UTF8',
      '--locale=C',
      '--no-sync',
    ]);
    // The base backup: the primary has never run, so its directory is consistent as it is.
    await exec('cp', ['-a', primaryDir, replicaDir]);
    await writeFile(join(replicaDir, 'standby.signal'), '');
    await writeFile(
      join(replicaDir, 'postgresql.auto.conf'),
      `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres password=${password} application_name=causeway_replica'\n`,
    );
    if (owner !== null) {
      await chown(join(replicaDir, 'standby.signal'), owner.uid, owner.gid);
      await chown(join(replicaDir, 'postgresql.auto.conf'), owner.uid, owner.gid);
    }
    await start(primaryDir, primaryPort);
    await start(replicaDir, replicaPort);
    await query(url(primaryPort, 'postgres'), `create database ${database}`);
  } catch (error) {
    const logs = await Promise.all(
      [primaryPort, replicaPort].map((port) =>
        readFile(join(root, `${port}.log`), 'utf8').catch(() => ''),
      ),
    );
    kill();
    process.removeListener('exit', kill);
    await rm(root, { recursive: true, force: true });
    throw new Error(`the replica pair did not start: ${String(error)}\n${logs.join('\n')}`, {
      cause: error,
    });
  }

  const pair: ReplicaPair = {
    primaryUrl: url(primaryPort),
    replicaUrl: url(replicaPort),
    async caughtUp(timeoutMs = 15_000) {
      const [written] = await query<{ lsn: string }>(
        pair.primaryUrl,
        'select pg_current_wal_insert_lsn()::text as lsn',
      );
      const lsn = written?.lsn;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        // Its own database: the replica may not have replayed the test database's creation yet.
        const [row] = await query<{ replayed: boolean }>(
          url(replicaPort, 'postgres'),
          'select pg_last_wal_replay_lsn() >= $1::pg_lsn as replayed',
          [lsn],
        );
        if (row?.replayed === true) return;
        if (Date.now() > deadline) throw new Error(`the replica did not replay ${lsn} in time`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    replicaLog: () => readFile(join(root, `${replicaPort}.log`), 'utf8'),
    stopReplica: () => stopServer(replicaDir),
    async stop() {
      try {
        await stopServer(replicaDir);
        await stopServer(primaryDir);
      } finally {
        kill();
        process.removeListener('exit', kill);
        await rm(root, { recursive: true, force: true, maxRetries: 3 });
      }
    },
  };
  return pair;
}

/** Both servers run alike; the standby needs settings at least the primary's (max_connections). */
function serverFlags(port: number): string[] {
  return [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    // TCP only: no socket files, no clash with another server's socket.
    "-c unix_socket_directories=''",
    '-c fsync=off',
    '-c full_page_writes=off',
    // wal_level (replica) and max_wal_senders (10) keep their defaults: the copy's control
    // file holds initdb's values, and a standby refuses lower ones than its primary's.
    '-c max_connections=100',
    // The standby starts from the copy's checkpoint: the primary keeps that WAL for it.
    '-c wal_keep_size=256MB',
  ];
}

/** The binaries of the embedded-postgres package for this platform (its own export). */
async function binaries(): Promise<{ initdb: string; pgCtl: string }> {
  const fromPackage = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const entry = fromPackage.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  const paths = (await import(pathToFileURL(entry).href)) as { initdb: string; pg_ctl: string };
  return { initdb: paths.initdb, pgCtl: paths.pg_ctl };
}

/**
 * PostgreSQL refuses to run as root: as root the servers run as the `postgres` system user
 * (created like embedded-postgres does when missing). Null when not root.
 */
async function serverUser(): Promise<{ uid: number; gid: number } | null> {
  if (process.getuid?.() !== 0) return null;
  const ids = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    await run('groupadd', ['postgres']).catch(() => undefined);
    await run('useradd', ['-g', 'postgres', 'postgres']);
    return ids();
  }
}

/** From the synchronous 'exit' event: no server outlives an interrupted run. */
function killSync(dataDir: string): void {
  try {
    const pid = Number.parseInt(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8'), 10);
    if (Number.isInteger(pid) && pid > 0) process.kill(pid, 'SIGKILL');
  } catch {
    // Not running any more.
  }
}
