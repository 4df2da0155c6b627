/**
 * The exit codes tell the failures apart (docs/cli.md): usage, not found, refused (the other
 * files), unauthenticated, connection and other server errors, each with its `--json` error
 * shape. The CLI runs as a child process; the servers are real HTTP servers.
 */
import { execFile } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { query } from '../helpers/engine';
import {
  aliceToken,
  type CliRun,
  causeway,
  causewayJson,
  closedPort,
  submitted,
  useCli,
} from './helpers';

const { url, db, asAlice } = useCli();
const unknownId = '01a2322f-0000-7000-8000-000000000000';

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(servers.splice(0).map((open) => new Promise((resolve) => open.close(resolve))));
});

/** A loopback HTTP server answering every request with `status` and `body`. */
async function answering(status: number, body: string, type = 'application/json'): Promise<string> {
  const http = createHttpServer((_request, response) => {
    response.writeHead(status, { 'content-type': type }).end(body);
  });
  servers.push(http);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const address = http.address() as { port: number };
  return `http://127.0.0.1:${address.port}/graphql`;
}

const errorJson = (kind: string, code: string, exitCode: number) => ({
  error: { kind, code, exitCode, message: expect.any(String) },
});

function expectPlain(run: CliRun): void {
  // Not a terminal: no colour escapes, whatever the command printed.
  expect(`${run.stdout}${run.stderr}`).not.toContain('\u001b[');
}

describe('usage errors exit 2 and change nothing', () => {
  it.each([
    [['frob'], /unknown command "frob"/],
    [['status'], /status needs <workflowId>/],
    [['status', 'a', 'b'], /status takes at most 1 argument/],
    [['status', unknownId, '--bogus'], /Unknown option '--bogus'/],
    [['replay', unknownId], /replay needs --reason <text>/],
    [['send-event', 'cli.approved', 'no-reason'], /send-event needs --reason <text>/],
    [['submit', 'cli-staged', '--input', '{nope'], /--input is not JSON/],
    [['submit', 'cli-staged', '--input', '{}', '--input-file', 'x.json'], /not both/],
    [['watch', '--after', 'yesterday'], /--after wants a transition id/],
    [['status', unknownId, '--timeout-ms', '0'], /--timeout-ms wants a positive whole number/],
    [
      ['requeue-dead', '--reason-code', 'bulk_requeue', '--from', 'last week', '--reason', 'r'],
      /--from wants an ISO 8601 time/,
    ],
  ])('causeway %j', async (args, message) => {
    const before = await query(db(), 'select count(*)::int as n from causeway_transitions');
    const run = await causeway([...args, ...asAlice()]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toMatch(/\nsee: causeway (\S+ )?--help\n$/);
    expect(await query(db(), 'select count(*)::int as n from causeway_transitions')).toEqual(
      before,
    );
  });

  it('answers the error as JSON with --json, and prints the help with no command', async () => {
    const { code, json } = await causewayJson(['status']);
    expect(code).toBe(2);
    expect(json).toEqual(errorJson('usage', 'USAGE', 2));
    const bare = await causeway([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toMatch(/^usage: causeway <command>/m);
    for (const asked of [
      ['--help'],
      ['help'],
      ['help', 'watch'],
      ['watch', '--help'],
      ['--version'],
    ]) {
      const run = await causeway(asked);
      expect(run.code, asked.join(' ')).toBe(0);
      expectPlain(run);
    }
  });

  it('exits 2 when the server refuses the values as input (BAD_USER_INPUT)', async () => {
    const unknown = await causewayJson([
      'submit',
      'no-such-workflow',
      '--url',
      url(),
      '--token',
      aliceToken,
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.json).toEqual(errorJson('usage', 'BAD_USER_INPUT', 2));
    const invalid = await causeway([
      'submit',
      'cli-staged',
      '--input',
      '{"label":""}',
      '--url',
      url(),
      '--token',
      aliceToken,
    ]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/^causeway: input does not match the schema of "cli-staged"/);
  });
});

describe('not found exits 3', () => {
  it.each([
    [['status', unknownId]],
    [['explain', 'not-a-uuid']],
    [['watch', unknownId]],
    [['cancel', unknownId, '--reason', 'r']],
    [['replay', unknownId, '--reason', 'r']],
    [['pause-schedule', 'no-such-schedule', '--reason', 'r']],
  ])('causeway %j', async (args) => {
    const { code, json } = await causewayJson([...args, ...asAlice()]);
    expect(code).toBe(3);
    expect(json).toEqual(errorJson('not_found', 'NOT_FOUND', 3));
  });
});

describe('unauthenticated exits 5', () => {
  it('for a bad token on any request, and for a mutation without a token', async () => {
    const id = await submitted(url(), 'cli-staged', { label: 'auth' }); // waits: cancellable
    const bad = await causewayJson([
      'status',
      id,
      '--url',
      url(),
      '--token',
      'not-a-valid-token-at-all',
    ]);
    expect(bad.code).toBe(5);
    expect(bad.json).toEqual(errorJson('unauthenticated', 'UNAUTHENTICATED', 5));
    const none = await causeway(['cancel', id, '--reason', 'no token', '--url', url()]);
    expect(none.code).toBe(5);
    expect(none.stderr).toMatch(/pass --token or set CAUSEWAY_TOKEN/);
    const fromEnv = await causeway(['cancel', id, '--reason', 'token from the environment'], {
      env: { CAUSEWAY_URL: url(), CAUSEWAY_TOKEN: 'not-a-valid-token-at-all' },
    });
    expect(fromEnv.code).toBe(5);
    // Reads need no token; the environment gives the URL and, here, a valid token.
    const read = await causeway(['status', id], { env: { CAUSEWAY_URL: url() } });
    expect(read.code).toBe(0);
    const good = await causeway(['cancel', id, '--reason', 'env token'], {
      env: { CAUSEWAY_URL: url(), CAUSEWAY_TOKEN: aliceToken },
    });
    expect(good.code).toBe(0);
  });
});

describe('connection errors exit 6', () => {
  it('for a closed port, a URL that is not a GraphQL endpoint, and a server that never answers', async () => {
    const closed = `http://127.0.0.1:${await closedPort()}/graphql`;
    const refused = await causewayJson(['status', unknownId, '--url', closed]);
    expect(refused.code).toBe(6);
    expect(refused.json).toEqual(errorJson('connection', 'CONNECTION_FAILED', 6));
    const watch = await causeway(['watch', '--url', closed]);
    expect(watch.code).toBe(6);
    expect(watch.stderr).toMatch(
      /^causeway: cannot reach http:\/\/127\.0\.0\.1:\d+\/graphql: ECONNREFUSED\n$/,
    );

    const elsewhere = await causewayJson([
      'status',
      unknownId,
      '--url',
      url().replace(/\/graphql$/, '/nope'),
    ]);
    expect(elsewhere.code).toBe(6);
    expect(elsewhere.json).toEqual(errorJson('connection', 'NOT_GRAPHQL', 6));

    const silent = createTcpServer((socket) => sockets.push(socket)); // accepts, never answers
    servers.push(silent);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const slow = await causewayJson([
      'status',
      unknownId,
      '--url',
      `http://127.0.0.1:${port}/graphql`,
      '--timeout-ms',
      '300',
    ]);
    expect(slow.code).toBe(6);
    expect(slow.json).toEqual(errorJson('connection', 'TIMEOUT', 6));
  });
});

describe('other server errors exit 1', () => {
  it('for an INTERNAL_SERVER_ERROR answer and for a 5xx that is not GraphQL', async () => {
    const internal = await answering(
      200,
      JSON.stringify({
        data: null,
        errors: [{ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
      }),
    );
    const first = await causewayJson(['status', unknownId, '--url', internal]);
    expect(first.code).toBe(1);
    expect(first.json).toEqual(errorJson('server', 'INTERNAL_SERVER_ERROR', 1));
    const gateway = await answering(502, '<html>bad gateway</html>', 'text/html');
    const second = await causewayJson(['status', unknownId, '--url', gateway]);
    expect(second.code).toBe(1);
    expect(second.json).toEqual(errorJson('server', 'HTTP_502', 1));
  });
});

describe('the workspace bin', () => {
  it('runs as `pnpm exec causeway` from the repository root', async () => {
    const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
    const { stdout } = await promisify(execFile)('pnpm', ['exec', 'causeway', 'status', '--help'], {
      cwd: repoRoot,
    });
    expect(stdout).toMatch(/^usage: causeway status <workflowId> \[options\]$/m);
  });
});
