/**
 * Who may read without a token (issue 28, item 7). A server that others can reach (it listens
 * on 0.0.0.0; the test connects through 127.0.0.1) refuses anonymous queries, both
 * subscription transports, the dashboard's data and `/metrics` with UNAUTHENTICATED, and
 * serves them with a token; `publicReads: true` opens them (and logs a warning); a server on
 * loopback only stays open, as `pnpm start` is.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { serveApi } from '../../examples/publish-note/serve';
import { publishNote } from '../../examples/publish-note/workflow';
import { isLoopbackAddress } from '../../packages/api/src/auth';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { aliceToken, gql, handshake, silentLogger, sseSubscribe, startApi } from './helpers';

const database = useTestDatabase();
const readQuery = '{ workflows { edges { node { id input } } } }';

function originOf(url: string): string {
  return new URL(url).origin;
}

async function get(url: string, token?: string) {
  const response = await fetch(url, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  return { status: response.status, text: await response.text() };
}

/** A pino logger whose lines the test can read. */
function recordingLogger() {
  const lines: { level: number; msg: string; address?: string }[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n'))
        if (line !== '') lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

describe('reads on an address others can reach', () => {
  it('refuse every anonymous read with UNAUTHENTICATED and serve it with a token', async () => {
    const api = await startApi(database().url, {
      engine: { workflows: [publishNote] },
      host: '0.0.0.0',
    });
    const { workflow } = await api.engine.submit('publish-note', {
      noteId: 'private-note',
      version: 1,
    });
    const before = await query(
      database().url,
      'select count(*)::int as n from causeway_transitions',
    );

    const anonymous = await gql(api.url, readQuery);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.errors).toMatchObject([{ extensions: { code: 'UNAUTHENTICATED' } }]);
    expect(JSON.stringify(anonymous.body)).not.toContain('private-note');
    const byGet = await gql(api.url, readQuery, { method: 'GET' });
    expect(byGet.status).toBe(401);

    expect(await handshake(api.wsUrl, {})).toMatchObject({ ack: false, code: 4403 });
    const sse = sseSubscribe(api.url, 'subscription { transitions { id } }');
    expect(await sse.status).toBe(401);
    await sse.done;
    expect(sse.errors).toMatchObject([{ extensions: { code: 'UNAUTHENTICATED' } }]);

    const page = await get(`${originOf(api.url)}/workflows/${workflow.id}`);
    expect(page.status).toBe(401);
    expect(page.text).toContain('UNAUTHENTICATED');
    expect(page.text).not.toContain('private-note');
    const list = await get(`${originOf(api.url)}/`);
    expect(list.status).toBe(401);
    expect(list.text).not.toContain(workflow.id);

    const metrics = await get(`${originOf(api.url)}/metrics`);
    expect(metrics.status).toBe(401);
    expect(metrics.text).toContain('UNAUTHENTICATED');
    // Refusals change nothing.
    expect(
      await query(database().url, 'select count(*)::int as n from causeway_transitions'),
    ).toEqual(before);

    const withToken = await gql(api.url, readQuery, { token: aliceToken });
    expect(withToken.status).toBe(200);
    expect(JSON.stringify(withToken.body.data)).toContain('private-note');
    expect(await handshake(api.wsUrl, { authorization: `Bearer ${aliceToken}` })).toEqual({
      ack: true,
    });
    const stream = sseSubscribe(api.url, 'subscription { transitions { id } }', {
      token: aliceToken,
    });
    expect(await stream.status).toBe(200);
    stream.stop();
    const signedPage = await get(`${originOf(api.url)}/workflows/${workflow.id}`, aliceToken);
    expect(signedPage.status).toBe(200);
    expect(signedPage.text).toContain('private-note');
    expect((await get(`${originOf(api.url)}/metrics`, aliceToken)).status).toBe(200);
  });

  it('are open with publicReads: true, and the server says so in a warning', async () => {
    const { logger, lines } = recordingLogger();
    const api = await startApi(database().url, {
      engine: { workflows: [publishNote] },
      host: '0.0.0.0',
      api: { publicReads: true, logger },
    });
    expect((await gql(api.url, readQuery)).status).toBe(200);
    expect(await handshake(api.wsUrl, {})).toEqual({ ack: true });
    expect((await get(`${originOf(api.url)}/`)).status).toBe(200);
    expect((await get(`${originOf(api.url)}/metrics`)).status).toBe(200);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        address: '0.0.0.0',
        msg: expect.stringContaining('reads are public'),
      }),
    );
    // Mutations still need an operator.
    const mutation = await gql(api.url, 'mutation { cancelWorkflow(id: "x") { state } }');
    expect(mutation.status).toBe(401);
  });

  it('stay closed with publicReads: false even on loopback', async () => {
    const api = await startApi(database().url, {
      engine: { workflows: [publishNote] },
      api: { publicReads: false },
    });
    expect((await gql(api.url, readQuery)).status).toBe(401);
    expect((await gql(api.url, readQuery, { token: aliceToken })).status).toBe(200);
  });
});

describe('reads on loopback only', () => {
  it('stay open without a token, as under pnpm start', async () => {
    const { logger, lines } = recordingLogger();
    const api = await startApi(database().url, {
      engine: { workflows: [publishNote] },
      host: '127.0.0.1',
      api: { logger },
    });
    expect((await gql(api.url, readQuery)).status).toBe(200);
    expect(await handshake(api.wsUrl, {})).toEqual({ ack: true });
    expect((await get(`${originOf(api.url)}/`)).status).toBe(200);
    expect((await get(`${originOf(api.url)}/metrics`)).status).toBe(200);
    expect(lines.filter((line) => line.level >= 40)).toEqual([]);
    // A token that is sent must still be valid.
    expect((await gql(api.url, readQuery, { token: 'not-a-valid-token-0000' })).status).toBe(401);
  });

  it("stay open under pnpm start's server, whose banner says which reads need the token", async () => {
    const engine = testEngine(database().url, { workflows: [publishNote] });
    await engine.migrate();
    for (const [host, open] of [
      ['127.0.0.1', true],
      ['0.0.0.0', false],
    ] as const) {
      const api = await serveApi({
        engine,
        databaseUrl: database().url,
        logger: silentLogger(),
        port: 0,
        host,
        mode: 'production',
      });
      try {
        const url = api.url.replace('0.0.0.0', '127.0.0.1');
        expect({ host, status: (await gql(url, readQuery)).status }).toEqual({
          host,
          status: open ? 200 : 401,
        });
        expect(api.demoToken).not.toBeNull();
        expect((await gql(url, readQuery, { token: api.demoToken as string })).status).toBe(200);
        expect(api.banner).toContain(
          open
            ? `mutations need a token (reads are open: this address is loopback only): Authorization: Bearer ${api.demoToken}`
            : `reads and mutations need a token (sign in to the dashboard with it): Authorization: Bearer ${api.demoToken}`,
        );
      } finally {
        await api.close();
      }
    }
    await engine.close();
  });

  it('is told apart from addresses others can reach', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) {
      expect({ address, loopback: isLoopbackAddress(address) }).toEqual({
        address,
        loopback: true,
      });
    }
    for (const address of [
      '0.0.0.0',
      '::',
      '192.168.1.10',
      '10.0.0.1',
      '::ffff:10.0.0.1',
      'fe80::1',
    ]) {
      expect({ address, loopback: isLoopbackAddress(address) }).toEqual({
        address,
        loopback: false,
      });
    }
  });
});
