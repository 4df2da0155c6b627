import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { beforeAll } from 'vitest';
import { spawnFixture } from '../api/fixtures/processes';
import { operators } from '../api/helpers';
import type { TestDatabase } from '../helpers/database';

export { aliceToken, operators } from '../api/helpers';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
/** The workspace's bin, as `pnpm exec causeway` runs it. */
export const causewayBin = fileURLToPath(
  new URL('../../packages/cli/bin/causeway.js', import.meta.url),
);

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment of a CLI child: the test's, without any CAUSEWAY_* setting of its own. */
function cliEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('CAUSEWAY_') && key !== 'NO_COLOR') env[key] = value;
  }
  return { ...env, ...extra };
}

/** Runs `causeway <args>` as a child process (node on the bin) and collects what it printed. */
export function causeway(
  args: readonly string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [causewayBin, ...args],
      { cwd: repoRoot, env: cliEnv(options.env ?? {}), timeout: options.timeoutMs ?? 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** `causeway <args> --json`, its stdout parsed. */
export async function causewayJson<T = Record<string, unknown>>(
  args: readonly string[],
  options: Parameters<typeof causeway>[1] = {},
): Promise<{ code: number | null; json: T; stderr: string }> {
  const run = await causeway([...args, '--json'], options);
  let json: T;
  try {
    json = JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${run.code}): ${run.stdout}\n${run.stderr}`);
  }
  return { code: run.code, json, stderr: run.stderr };
}

/**
 * The CLI's server for a test file: engine, worker and API in a child process on the file's
 * database (started in beforeAll, killed after the file). Returns a getter of its URL.
 */
export function useCliServer(database: () => TestDatabase): () => string {
  let url: string | undefined;
  beforeAll(async () => {
    const server = spawnFixture(
      new URL('./fixtures/server.ts', import.meta.url),
      {
        CAUSEWAY_CHILD_DATABASE_URL: database().url,
        CAUSEWAY_OPERATORS: JSON.stringify(operators),
      },
      { lifetime: 'file' },
    );
    url = (await server.ready(60_000)).url;
  }, 90_000);
  return () => {
    if (url === undefined) throw new Error('useCliServer(): the server is not ready');
    return url;
  };
}

/** A loopback port nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
