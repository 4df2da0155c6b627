import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll } from 'vitest';
import { spawnFixture } from '../api/fixtures/processes';
import { aliceToken, data, operators } from '../api/helpers';
import { useTestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

export { aliceToken } from '../api/helpers';

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

export interface CliSetup {
  /** The server's GraphQL endpoint. */
  url(): string;
  /** The server's worker's lease holder. */
  holder(): string;
  /** The test file's database. */
  db(): string;
  /** `--url <server> --token <alice's>`: the arguments of an operator's command. */
  asAlice(): string[];
}

/**
 * A test file's database and the CLI's server on it: engine, worker and API in a child
 * process (started in beforeAll, killed after the file's tests). With `tree`, it also runs
 * the tree's workflows (test/engine/tree-workflows.ts) and their queue.
 */
export function useCli(options: { readonly tree?: boolean } = {}): CliSetup {
  const database = useTestDatabase();
  let server: { url: string; holder: string } | undefined;
  beforeAll(async () => {
    const child = spawnFixture(
      new URL('./fixtures/server.ts', import.meta.url),
      {
        CAUSEWAY_CHILD_DATABASE_URL: database().url,
        CAUSEWAY_OPERATORS: JSON.stringify(operators),
        ...(options.tree === true ? { CAUSEWAY_CHILD_TREE: '1' } : {}),
      },
      { lifetime: 'file' },
    );
    const ready = await child.ready(60_000);
    server = { url: ready.url as string, holder: ready.holder as string };
  }, 90_000);
  const ready = () => {
    if (server === undefined) throw new Error('useCli(): the server is not ready');
    return server;
  };
  return {
    url: () => ready().url,
    holder: () => ready().holder,
    db: () => database().url,
    asAlice: () => ['--url', ready().url, '--token', aliceToken],
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

/** Submits a workflow over GraphQL (set-up, not the thing under test); resolves to its id. */
export async function submitted(url: string, name: string, input: unknown): Promise<string> {
  const answer = await data<{ submitWorkflow: { workflow: { id: string } } }>(
    url,
    'mutation ($name: String!, $input: JSON!) { submitWorkflow(name: $name, input: $input) { workflow { id } } }',
    { token: aliceToken, variables: { name, input } },
  );
  return answer.submitWorkflow.workflow.id;
}

/** A workflow's tasks as the database has them, in step order of creation. */
export async function storedTasks(databaseUrl: string, workflowId: string) {
  return query<{ id: string; step: string; state: string }>(
    databaseUrl,
    'select id::text, step, state from causeway_tasks where workflow_id = $1 order by id',
    [workflowId],
  );
}

/** Waits until the workflow's stored state is one of `states`. */
export async function workflowReaches(
  databaseUrl: string,
  workflowId: string,
  ...states: string[]
) {
  await waitFor(
    async () => {
      const rows = await query<{ state: string }>(
        databaseUrl,
        'select state from causeway_workflows where id = $1',
        [workflowId],
      );
      return states.includes(rows[0]?.state ?? '');
    },
    { timeoutMs: 30_000, description: `workflow ${workflowId} ${states.join(' or ')}` },
  );
}

export interface RunningCli {
  /** What it printed on stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves to its exit code once it exits. */
  readonly exited: Promise<number | null>;
  /** Sends a signal (SIGINT: what Ctrl-C sends). */
  signal(name: NodeJS.Signals): void;
}

const running = new Set<ChildProcess>();
afterEach(() => {
  for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
  running.clear();
});

/** Starts `causeway <args>` as a child process without waiting for it (killed after the test). */
export function startCauseway(args: readonly string[]): RunningCli {
  const child = spawn(process.execPath, [causewayBin, ...args], {
    cwd: repoRoot,
    env: cliEnv({}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => resolve(code)),
  );
  return { stdout: () => stdout, stderr: () => stderr, exited, signal: (name) => child.kill(name) };
}
