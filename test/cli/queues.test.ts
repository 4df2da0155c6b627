/**
 * `causeway queues`, `queues pause` and `queues resume` (R53) as child processes against a
 * server in another process: the listing, the pause kept with the operator and reason, the
 * `--json` shapes, a repeat that changes nothing, and usage errors that write nothing. The
 * listing also shows the concurrency groups (R50) with their busy keys, and the rate limits
 * (R51) with their spend and busiest keys after real claims and a throttled step.
 */
import { describe, expect, it } from 'vitest';
import { query, testEngine } from '../helpers/engine';
import { fillRateLimits, rateLimits, rateWorkflows } from '../helpers/rate-limited';
import { waitFor } from '../helpers/wait-for';
import { causeway, causewayJson, submitted, useCli } from './helpers';

const { url, db, asAlice } = useCli();

const pauseRows = async () =>
  query<{ queue: string; operator: string; reason: string }>(
    db(),
    'select queue, operator, reason from causeway_queue_pauses order by queue',
  );

describe('causeway queues', () => {
  it('lists queues, pauses one as the operator and resumes it', async () => {
    const listed = await causewayJson<{ queues: { name: string; paused: unknown }[] }>([
      'queues',
      '--url',
      url(),
    ]);
    expect(listed.code).toBe(0);
    expect(listed.json.queues.map((queue) => queue.name)).toContain('default');
    expect(listed.json.queues.every((queue) => queue.paused === null)).toBe(true);

    const paused = await causewayJson([
      'queues',
      'pause',
      'cli-held',
      '--reason',
      'partner outage',
      ...asAlice(),
    ]);
    expect(paused.code).toBe(0);
    expect(paused.json).toMatchObject({
      pauseQueue: {
        changed: true,
        queue: { name: 'cli-held', paused: { operator: 'alice', reason: 'partner outage' } },
      },
    });
    expect(await pauseRows()).toEqual([
      { queue: 'cli-held', operator: 'alice', reason: 'partner outage' },
    ]);
    const again = await causeway(['queues', 'pause', 'cli-held', '--reason', 'x', ...asAlice()]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('queue cli-held was already paused; nothing changed');
    const table = await causeway(['queues', '--url', url()]);
    expect(table.stdout).toMatch(/cli-held\s+yes\s+.*alice\s+partner outage/);

    const resumed = await causewayJson(['queues', 'resume', 'cli-held', ...asAlice()]);
    expect(resumed.code).toBe(0);
    expect(resumed.json).toEqual({
      resumeQueue: { changed: true, queue: { name: 'cli-held', paused: null } },
    });
    expect(await pauseRows()).toEqual([]);
  });

  it('lists the concurrency groups with held slots, ready tasks and the busiest keys', async () => {
    for (const label of ['acme', 'acme', 'acme', 'bolt']) {
      await submitted(url(), 'cli-keyed', { label });
    }
    await waitFor(
      async () =>
        (
          await query<{ n: number }>(
            db(),
            "select count(*)::int as n from causeway_tasks where step = 'call' and state = 'leased'",
          )
        )[0]?.n === 2,
      { timeoutMs: 10_000, description: 'one call per label holds its slot' },
    );
    const listed = await causewayJson<{
      concurrencyGroups: {
        name: string;
        limit: number;
        defined: boolean;
        keysBusy: number;
        held: number;
        queued: number;
        keys: { key: string; held: number; queued: number }[];
      }[];
    }>(['queues', '--url', url()]);
    expect(listed.code).toBe(0);
    expect(listed.json.concurrencyGroups).toEqual([
      {
        name: 'cli-partner',
        limit: 1,
        defined: true,
        keysBusy: 2,
        held: 2,
        queued: 2,
        keys: [
          { key: 'acme', limit: 1, held: 1, queued: 2 },
          { key: 'bolt', limit: 1, held: 1, queued: 0 },
        ],
      },
    ]);
    const text = await causeway(['queues', '--url', url()]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/CONCURRENCY GROUP\s+LIMIT\s+KEYS BUSY\s+HELD\s+QUEUED/);
    expect(text.stdout).toMatch(/cli-partner\s+1\s+2\s+2\s+2\s+acme 1\/1 \(\+2\), bolt 1\/1/);
  });

  it('lists the rate limits with their spend, limited keys and busiest keys', async () => {
    const engine = testEngine(db(), { workflows: rateWorkflows, rateLimits });
    const { pausedTask } = await fillRateLimits(engine, db()).finally(() => engine.close());
    const listed = await causewayJson<{
      rateLimits: { name: string; spent: number; limitedKeys: number; busiest: unknown[] }[];
    }>(['queues', '--url', url()]);
    expect(listed.code).toBe(0);
    expect(
      listed.json.rateLimits.map(({ name, spent, limitedKeys, busiest }) => ({
        name,
        spent,
        limitedKeys,
        busiest: busiest.length,
      })),
    ).toEqual([
      { name: 'posts', spent: 5, limitedKeys: 2, busiest: 3 },
      { name: 'exports', spent: 0, limitedKeys: 0, busiest: 0 },
    ]);
    const text = await causeway(['queues', '--url', url()]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/RATE LIMIT\s+LIMIT\/PERIOD\s+SPENT NOW\s+LIMITED KEYS\s+BUSIEST/);
    const time = '\\d\\d:\\d\\d:\\d\\d';
    expect(text.stdout).toMatch(
      new RegExp(
        `posts\\s+3 per 1 min\\s+5\\s+2\\s+acme 3 \\(next slot ${time}\\), ` +
          `zed 1 \\(paused until ${time} by task ${pausedTask}: HTTP 429\\), bolt 1\\n`,
      ),
    );
    expect(text.stdout).toMatch(/exports\s+100 per 1 h\s+0\s+0\s+-/);
  });

  it('refuses a missing reason, name or unknown action as usage errors and writes nothing', async () => {
    for (const args of [
      ['queues', 'pause', 'cli-held'],
      ['queues', 'pause'],
      ['queues', 'stop', 'cli-held'],
    ]) {
      const refused = await causewayJson<{ error: { code: string; exitCode: number } }>([
        ...args,
        ...asAlice(),
      ]);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.json.error).toMatchObject({ code: 'USAGE', exitCode: 2 });
    }
    expect(await pauseRows()).toEqual([]);
  });
});
