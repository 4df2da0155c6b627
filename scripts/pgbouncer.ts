import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from './embedded-postgres';
import { pgbouncer as debianPgBouncer, installCommand, pgbouncerPath } from './test-programs';

export { pgbouncerPath };

const startTimeoutMs = 10_000;
const maxLogLines = 100;

export interface PgBouncerOptions {
  /** The server every database goes to (any database name passes through). */
  readonly serverUrl: string;
  /** Server connections per database and user (`default_pool_size`). */
  readonly poolSize: number;
  /**
   * Named prepared statements it tracks per client (`max_prepared_statements`, PgBouncer 1.21
   * and later). Default 0: none, as before 1.21, whatever the version's own default (200 from
   * 1.24), so every version behaves alike unless asked.
   */
  readonly maxPreparedStatements?: number;
}

export interface PgBouncerVersion {
  readonly major: number;
  readonly minor: number;
  /** As `pgbouncer --version` prints it, e.g. `1.18.0`. */
  readonly text: string;
}

/** The installed PgBouncer's version, read from `pgbouncer --version`. */
export function pgbouncerVersion(): PgBouncerVersion {
  const output = execFileSync(pgbouncerPath, ['--version'], { encoding: 'utf8' });
  const match = /PgBouncer (\d+)\.(\d+)(\.\d+)?/i.exec(output);
  if (match === null) throw new Error(`unexpected \`pgbouncer --version\` output: ${output}`);
  return {
    major: Number(match[1]),
    minor: Number(match[2]),
    text: `${match[1]}.${match[2]}${match[3] ?? ''}`,
  };
}

/** Whether this version can track named prepared statements (`max_prepared_statements`, 1.21). */
export function tracksPreparedStatements(version: PgBouncerVersion): boolean {
  return version.major > 1 || (version.major === 1 && version.minor >= 21);
}

export interface PgBouncer {
  readonly port: number;
  /** `url` (a database on the server) with the pooler's host and port instead. */
  urlFor(url: string): string;
  /** The pooler's admin console (`SHOW STATS`, `SHOW POOLS`). */
  readonly adminUrl: string;
  readonly pid: number;
  /** The last lines of its log, to explain a failure. */
  logTail(): string;
  stop(): Promise<void>;
}

/**
 * Starts PgBouncer in transaction-pooling mode on a free port of 127.0.0.1, in front of
 * `serverUrl`'s server, with a generated ini in a fresh temp dir. Clients log in without a
 * password (`auth_type = trust`, listening on loopback only); PgBouncer logs in to the server
 * with the server URL's credentials. PgBouncer refuses to run as root, so as root it is told
 * to switch to the `postgres` user (or `nobody`), who must read the ini.
 */
export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  if (!existsSync(pgbouncerPath)) {
    throw new Error(
      `PgBouncer is missing at ${pgbouncerPath}. Install it with ` +
        `\`${installCommand([debianPgBouncer])}\` (\`pnpm test\` installs it when run as root).`,
    );
  }
  const maxPreparedStatements = options.maxPreparedStatements ?? 0;
  const version = pgbouncerVersion();
  if (maxPreparedStatements > 0 && !tracksPreparedStatements(version)) {
    throw new Error(`PgBouncer ${version.text} cannot track prepared statements (1.21 can)`);
  }
  const server = new URL(options.serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const password = decodeURIComponent(server.password);
  const port = await findFreePort();
  const dir = await mkdtemp(join(tmpdir(), 'causeway-pgbouncer-'));
  const ini = join(dir, 'pgbouncer.ini');
  const users = join(dir, 'users.txt');
  const target = [
    `host=${server.hostname}`,
    `port=${server.port || '5432'}`,
    `user=${user}`,
    ...(password === '' ? [] : [`password=${password}`]),
  ].join(' ');
  await writeFile(users, `"${user}" ""\n`);
  await writeFile(
    ini,
    [
      '[databases]',
      `* = ${target}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${users}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize}`,
      'max_client_conn = 1000',
      // Connections of a dropped test database must not linger in the pool.
      'server_idle_timeout = 5',
      // A version without the setting refuses to start on it.
      ...(tracksPreparedStatements(version)
        ? [`max_prepared_statements = ${maxPreparedStatements}`]
        : []),
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    await chmod(dir, 0o755);
    await chmod(ini, 0o644);
    await chmod(users, 0o644);
  }
  const args = asRoot ? ['-u', unprivilegedUser(), ini] : [ini];
  const child = spawn(pgbouncerPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const log: string[] = [];
  const record = (chunk: Buffer) => {
    log.push(
      ...chunk
        .toString()
        .split('\n')
        .filter((line) => line.trim() !== ''),
    );
    if (log.length > maxLogLines) log.splice(0, log.length - maxLogLines);
  };
  child.stdout?.on('data', record);
  child.stderr?.on('data', record);
  // A test or bench that dies without stopping it must not leave it listening.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      process.off('exit', killOnExit);
      resolve();
    }),
  );
  const logTail = () => log.join('\n');
  try {
    await waitForPort(port, child);
  } catch (error) {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw new Error(`PgBouncer did not start: ${(error as Error).message}\n${logTail()}`);
  }
  const urlFor = (url: string) => pooledUrl(url, port);
  const admin = new URL(urlFor(options.serverUrl));
  admin.pathname = '/pgbouncer';
  return {
    port,
    urlFor,
    adminUrl: admin.toString(),
    pid: child.pid as number,
    logTail,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** `url` (a database on the server) through a pooler on 127.0.0.1:`port` (no password: trust). */
export function pooledUrl(url: string, port: number): string {
  const pooled = new URL(url);
  pooled.hostname = '127.0.0.1';
  pooled.port = String(port);
  pooled.password = '';
  return pooled.toString();
}

function unprivilegedUser(): string {
  const passwd = readFileSync('/etc/passwd', 'utf8');
  return /^postgres:/m.test(passwd) ? 'postgres' : 'nobody';
}

/** Resolves once the port accepts a TCP connection; rejects if the process exits first. */
async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`it exited (${child.exitCode ?? child.signalCode})`);
    }
    if (await accepts(port)) return;
    if (Date.now() > deadline) throw new Error(`port ${port} not open after ${startTimeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
