/**
 * R51 over HTTP: the `rateLimits` query shows each declared limit with its spend, limited
 * keys and busiest keys (next slot, pause with who and why) after real claims and a real
 * throttled step; bad input is refused with a stable code. `/metrics` shows the spend, the
 * limit and the limited keys per limit name, never per key.
 */
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { testEngine } from '../helpers/engine';
import { fillRateLimits, rateLimits, rateWorkflows } from '../helpers/rate-limited';
import { data, gql, startApi } from './helpers';
import { parsePrometheusText, samplesOf } from './prometheus-text';

const database = useTestDatabase();
const url = () => database().url;

const listing = `query($name: String, $keys: Int) {
  rateLimits(name: $name, keysPerLimit: $keys) {
    name limit periodMs keys spent limitedKeys
    busiest { key spent nextSlotAt pausedUntil pausedByTask pausedByWorkflow pausedReason }
  }
}`;

interface Listed {
  rateLimits: {
    name: string;
    keys: number;
    spent: number;
    limitedKeys: number;
    busiest: {
      key: string | null;
      spent: number;
      nextSlotAt: string | null;
      pausedUntil: string | null;
      pausedByTask: string | null;
      pausedByWorkflow: string | null;
      pausedReason: string | null;
    }[];
  }[];
}

describe('rate limits over GraphQL and /metrics (R51)', () => {
  it('lists each limit with its spend and busiest keys, and gauges them by name', async () => {
    const engine = testEngine(url(), { workflows: rateWorkflows, rateLimits, pollIntervalMs: 20 });
    const api = await startApi(url(), { engineInstance: engine });
    const { pausedTask, pausedWorkflow } = await fillRateLimits(engine, url());
    const listed = (await data<Listed>(api.url, listing)).rateLimits;
    expect(listed.map(({ busiest: _, ...limit }) => limit)).toEqual([
      { name: 'posts', limit: 3, periodMs: 60_000, keys: 3, spent: 5, limitedKeys: 2 },
      { name: 'exports', limit: 100, periodMs: 3_600_000, keys: 0, spent: 0, limitedKeys: 0 },
    ]);
    const [acme, zed, bolt] = listed[0]?.busiest ?? [];
    expect([acme?.key, zed?.key, bolt?.key]).toEqual(['acme', 'zed', 'bolt']);
    expect(acme).toMatchObject({ spent: 3, pausedUntil: null, pausedReason: null });
    expect(Date.parse(acme?.nextSlotAt as string)).toBeGreaterThan(Date.now());
    expect(zed).toMatchObject({
      spent: 1,
      nextSlotAt: null,
      pausedByTask: pausedTask,
      pausedByWorkflow: pausedWorkflow,
      pausedReason: 'HTTP 429',
    });
    expect(Date.parse(zed?.pausedUntil as string)).toBeGreaterThan(Date.now() + 20_000);
    expect(bolt).toEqual({
      key: 'bolt',
      spent: 1,
      nextSlotAt: null,
      pausedUntil: null,
      pausedByTask: null,
      pausedByWorkflow: null,
      pausedReason: null,
    });
    const one = await data<Listed>(api.url, listing, { variables: { name: 'posts', keys: 1 } });
    expect(one.rateLimits.map((limit) => limit.busiest.map((key) => key.key))).toEqual([['acme']]);

    const text = await (await fetch(api.url.replace(/\/graphql$/, '/metrics'))).text();
    const parsed = parsePrometheusText(text);
    const gauge = (name: string) =>
      samplesOf(parsed, name).map((sample) => ({ labels: sample.labels, value: sample.value }));
    expect(gauge('causeway_rate_limit_spent')).toEqual([
      { labels: { name: 'posts' }, value: 5 },
      { labels: { name: 'exports' }, value: 0 },
    ]);
    expect(gauge('causeway_rate_limit')).toEqual([
      { labels: { name: 'posts' }, value: 3 },
      { labels: { name: 'exports' }, value: 100 },
    ]);
    expect(gauge('causeway_rate_limited_keys')).toEqual([
      { labels: { name: 'posts' }, value: 2 },
      { labels: { name: 'exports' }, value: 0 },
    ]);
    expect(text).not.toMatch(/causeway_rate_limit[a-z_]*\{[^}]*key=/);
  });

  it.each([0, 101])('refuses keysPerLimit: %s with BAD_USER_INPUT', async (keys) => {
    const api = await startApi(url(), { engine: { workflows: rateWorkflows, rateLimits } });
    const refused = await gql(api.url, `query { rateLimits(keysPerLimit: ${keys}) { name } }`);
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
