/**
 * `/metrics` as an endpoint, on a real server and real PostgreSQL: who may read it (open like
 * GraphQL reads by default; a metrics token or `publicReads: false` asks for a token, and an
 * operator's works too), what other methods get, a bad metrics token refused at start, a
 * database that cannot answer (503, then it serves again), `metrics: false`, and the schedule
 * lag gauge of a due schedule nobody ticks.
 */
import { createApiServer } from '@causeway/api';
import { schedule } from '@causeway/workflow';
import { afterEach, describe, expect, it } from 'vitest';
import { tickWorkflow } from '../engine/fixtures/schedules';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { aliceToken, silentLogger, startApi } from './helpers';
import { parsePrometheusText, samplesOf, sampleValue } from './prometheus-text';

const database = useTestDatabase();
const url = () => database().url;
const metricsToken = 'scrape-token-0123456789abcdef';
const metricsUrl = (api: { url: string }) => api.url.replace(/\/graphql$/, '/metrics');

async function get(target: string, token?: string, method = 'GET') {
  const response = await fetch(target, {
    method,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

afterEach(() => {
  delete process.env.CAUSEWAY_METRICS_TOKEN;
});

describe('who may read /metrics', () => {
  it('is open by default; a token sent must be known; other methods are refused', async () => {
    const api = await startApi(url(), { engine: { workflows: [] } });
    const target = metricsUrl(api);
    const open = await get(target);
    expect(open.status).toBe(200);
    expect(open.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(parsePrometheusText(open.text).families.has('causeway_tasks')).toBe(true);
    expect((await get(`${target}?debug=1`)).status).toBe(200);
    expect((await get(target, aliceToken)).status).toBe(200);

    const wrong = await get(target, 'not-a-known-token-at-all');
    expect(wrong.status).toBe(401);
    expect(wrong.text).toBe('UNAUTHENTICATED: the bearer token is not valid\n');
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="causeway-metrics"');

    const posted = await get(target, undefined, 'POST');
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET, HEAD');
    expect(posted.text).toBe('METHOD_NOT_ALLOWED: /metrics answers GET and HEAD\n');

    const head = await get(target, undefined, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(1_000);
  });

  it('asks for the metrics token (or an operator token) once one is set', async () => {
    const api = await startApi(url(), {
      engine: { workflows: [] },
      api: { metrics: { token: metricsToken } },
    });
    const target = metricsUrl(api);
    const anonymous = await get(target);
    expect(anonymous.status).toBe(401);
    expect(anonymous.text).toBe(
      'UNAUTHENTICATED: send Authorization: Bearer <metrics or operator token>\n',
    );
    expect((await get(target, metricsToken)).status).toBe(200);
    expect((await get(target, aliceToken)).status).toBe(200);
    expect((await get(target, `${metricsToken}x`)).status).toBe(401);
    // The metrics token is no operator: it changes nothing over GraphQL.
    const mutation = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${metricsToken}` },
      body: JSON.stringify({
        query: 'mutation { pauseSchedule(name: "x", reason: "y") { changed } }',
      }),
    });
    expect(mutation.status).toBe(401);
  });

  it('takes the token from CAUSEWAY_METRICS_TOKEN, and asks for one when reads are not public', async () => {
    process.env.CAUSEWAY_METRICS_TOKEN = metricsToken;
    const fromEnv = await startApi(url(), { engine: { workflows: [] } });
    expect((await get(metricsUrl(fromEnv))).status).toBe(401);
    expect((await get(metricsUrl(fromEnv), metricsToken)).status).toBe(200);
    delete process.env.CAUSEWAY_METRICS_TOKEN;

    const closed = await startApi(url(), {
      engine: { workflows: [] },
      api: { publicReads: false },
    });
    expect((await get(metricsUrl(closed))).status).toBe(401);
    expect((await get(metricsUrl(closed), aliceToken)).status).toBe(200);
  });

  it('refuses a metrics token too short to be a secret, before serving anything', async () => {
    const engine = testEngine(url(), { workflows: [] });
    expect(() =>
      createApiServer({
        engine,
        workflows: [],
        operators: [],
        databaseUrl: url(),
        logger: silentLogger(),
        metrics: { token: 'short' },
      }),
    ).toThrow('the metrics token must be at least 16 characters');
  });

  it('is not served with metrics: false', async () => {
    const api = await startApi(url(), { engine: { workflows: [] }, api: { metrics: false } });
    const response = await get(metricsUrl(api));
    expect(response.status).toBe(404);
    expect(response.text).not.toContain('causeway_');
  });
});

describe('a scrape the database cannot answer', () => {
  it('is a 503 with a stable code, and the next scrape after the database recovers is served', async () => {
    const api = await startApi(url(), { engine: { workflows: [] } });
    const target = metricsUrl(api);
    expect((await get(target)).status).toBe(200);
    await query(url(), 'alter table causeway_schedules rename to causeway_schedules_away');
    try {
      const failed = await get(target);
      expect(failed.status).toBe(503);
      expect(failed.text).toBe(
        'SERVICE_UNAVAILABLE: the metrics could not be read from the database\n',
      );
    } finally {
      await query(url(), 'alter table causeway_schedules_away rename to causeway_schedules');
    }
    expect((await get(target)).status).toBe(200);
  });
});

describe('the schedule lag gauge', () => {
  it('shows how late a due schedule is, and nothing for a paused one', async () => {
    const everyMinute = schedule({
      name: 'm-every-minute',
      workflow: tickWorkflow,
      cron: '* * * * *',
      timezone: 'UTC',
      input: { report: 'lag' },
    });
    const api = await startApi(url(), {
      engine: { workflows: [tickWorkflow], schedules: [everyMinute] },
    });
    await api.engine.schedules(); // written when the engine first needs them
    const target = metricsUrl(api);
    expect(
      samplesOf(parsePrometheusText((await get(target)).text), 'causeway_schedule_lag_seconds'),
    ).toEqual([]);

    // Nobody runs the scheduler: three minutes later its next tick is two to three minutes late.
    await setDatabaseClockOffset(url(), 3 * 60_000);
    const lag = () =>
      query<{ seconds: number }>(
        url(),
        `select extract(epoch from causeway_now() - next_tick_at)::float8 as seconds
           from causeway_schedules where name = 'm-every-minute'`,
      ).then((rows) => rows[0]?.seconds as number);
    const before = await lag();
    const scraped = parsePrometheusText((await get(target)).text);
    const after = await lag();
    const value = sampleValue(scraped, 'causeway_schedule_lag_seconds', {
      schedule: 'm-every-minute',
    });
    expect(before).toBeGreaterThan(120);
    expect(value).toBeGreaterThanOrEqual(before);
    expect(value).toBeLessThanOrEqual(after);

    await api.engine.pauseSchedule('m-every-minute', { operator: 'alice', reason: 'quiet' });
    const paused = parsePrometheusText((await get(target)).text);
    expect(samplesOf(paused, 'causeway_schedule_lag_seconds')).toEqual([]);
  });
});
