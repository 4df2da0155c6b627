/**
 * The queues page (R53) in headless Chromium against a real server and engine: it lists the
 * queues with their pause; the operator pauses one through its dialog with a reason (who and
 * why show on the page and are kept), and resumes it. Its "Concurrency keys" section (R50)
 * shows each group with its limit and busiest keys, held/limit, and the holders linking to
 * their workflows. Its "Rate limits" section (R51) shows each declared limit with its spend
 * after real claims, its busiest keys with their next slot, and a key paused by a throttled
 * step linking to that step's workflow.
 */
import { defineWorkflow, step } from '@causeway/workflow';
import { type Browser, chromium } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chromium as debianChromium, requireTestProgram } from '../../scripts/test-programs';
import { aliceToken, startApi } from '../api/helpers';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { fillRateLimits, rateLimits, rateWorkflows } from '../helpers/rate-limited';
import { waitFor } from '../helpers/wait-for';
import { collectErrors } from './fixtures/page-errors';

const database = useTestDatabase();
const shows = { timeout: 20_000 };

const heldWork = defineWorkflow({
  name: 'dashboard-held',
  input: z.object({}),
  steps: { only: step({ queue: 'held', run: () => 'done' }) },
});

const tenant = z.object({ tenant: z.string() });
const keyedWork = defineWorkflow({
  name: 'dashboard-keyed',
  input: tenant,
  steps: {
    call: step<z.output<typeof tenant>>({
      queue: 'keyed',
      concurrency: { key: (ctx) => ctx.input.tenant, limit: 1, group: 'partner <api>' },
      // Holds its slot until its lease is taken from it (the worker stops).
      run: (ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
        }),
    }),
  },
});

let browser: Browser | null = null;
afterEach(async () => {
  await browser?.close();
  browser = null;
});

describe('the queues page', () => {
  it('pauses a queue with a reason and resumes it, showing who and why', async () => {
    requireTestProgram(debianChromium);
    const api = await startApi(database().url, { engine: { workflows: [heldWork] } });
    const origin = new URL(api.url).origin;
    await api.engine.pauseQueue('parked', { operator: 'bob', reason: 'waiting on <vendor>' });

    browser = await chromium.launch({ executablePath: debianChromium.path, headless: true });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = collectErrors(page);
    await page.goto(`${origin}/`);
    await page.locator('nav a', { hasText: 'Queues' }).click();
    await page.waitForURL(`${origin}/queues`);
    const held = page.locator('tr[data-queue="held"]');
    const parked = page.locator('tr[data-queue="parked"]');
    await held.waitFor(shows);
    await expect(held.locator('td').first().textContent()).resolves.toBe('running');
    await expect(parked.locator('td').first().textContent()).resolves.toMatch(
      /^paused by bob .*: waiting on <vendor>$/,
    );

    await page.locator('#token-input').fill(aliceToken);
    await page.locator('#token-form button[type="submit"]').click();
    await expect(page.locator('#token-state').textContent()).resolves.toMatch(/Token set/);
    await held.locator('button[data-dialog="pause-queue"]').click();
    const dialog = page.locator('#dialog-pause-queue');
    await dialog.locator('textarea[name="reason"]').fill('partner outage');
    await dialog.locator('button.confirm').click();
    await page.locator('#outcome', { hasText: 'Queue held paused.' }).waitFor(shows);
    const stored = await query<{ queue: string; operator: string; reason: string }>(
      database().url,
      'select queue, operator, reason from causeway_queue_pauses order by queue',
    );
    expect(stored).toEqual([
      { queue: 'held', operator: 'alice', reason: 'partner outage' },
      { queue: 'parked', operator: 'bob', reason: 'waiting on <vendor>' },
    ]);

    await page.reload();
    await expect(held.locator('td').first().textContent()).resolves.toMatch(
      /^paused by alice .*: partner outage$/,
    );
    await expect(page.locator('[data-region="queues"] p').first().textContent()).resolves.toBe(
      '2 paused: claims take nothing from them until resumed.',
    );
    await held.locator('button[data-dialog="resume-queue"]').click();
    const resume = page.locator('#dialog-resume-queue');
    await resume.locator('textarea[name="reason"]').fill('partner back');
    await resume.locator('button.confirm').click();
    await page.locator('#outcome', { hasText: 'Queue held resumed.' }).waitFor(shows);
    expect((await api.engine.queues()).find((queue) => queue.name === 'held')?.paused).toBeNull();
    expect(errors).toEqual([]);
  }, 60_000);

  it('shows the concurrency groups, their busiest keys and the holders', async () => {
    requireTestProgram(debianChromium);
    const api = await startApi(database().url, { engine: { workflows: [keyedWork] } });
    const origin = new URL(api.url).origin;
    const ids: string[] = [];
    for (const name of ['acme', 'acme', 'bolt']) {
      ids.push((await api.engine.submit(keyedWork.name, { tenant: name })).workflow.id);
    }
    const worker = await api.engine.startWorker({ queues: ['keyed'], concurrency: 4 });
    try {
      await waitFor(
        async () =>
          (
            await query<{ n: number }>(
              database().url,
              "select count(*)::int as n from causeway_tasks where state = 'leased'",
            )
          )[0]?.n === 2,
        { description: 'one holder per key' },
      );
      const holders = await query<{ workflow_id: string; concurrency_key: string }>(
        database().url,
        "select workflow_id::text, concurrency_key from causeway_tasks where state = 'leased'",
      );
      browser = await chromium.launch({ executablePath: debianChromium.path, headless: true });
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors = collectErrors(page);
      await page.goto(`${origin}/queues`);
      const group = page.locator('[data-region="concurrency"] article[data-group="partner <api>"]');
      await group.waitFor(shows);
      await expect(group.locator('h3').textContent()).resolves.toBe('partner <api>');
      await expect(group.locator('.group-summary').textContent()).resolves.toBe(
        'limit 1 per key; 2 keys busy, 2 slots held, 1 ready task waiting. Steps: dashboard-keyed/call.',
      );
      const acme = group.locator('tr[data-key="acme"]');
      await expect(acme.locator('.held').textContent()).resolves.toBe('1/1');
      await expect(acme.locator('.queued').textContent()).resolves.toBe('1');
      await expect(group.locator('tr[data-key="bolt"] .queued').textContent()).resolves.toBe('0');
      const acmeHolder = holders.find((row) => row.concurrency_key === 'acme')?.workflow_id;
      expect(acmeHolder).toBeDefined();
      await acme.locator('ul.holders a').click();
      await page.waitForURL(`${origin}/workflows/${acmeHolder}`);
      expect(errors).toEqual([]);
    } finally {
      await worker.stop({ drainMs: 100 });
    }
  }, 60_000);

  it('shows the rate limits, their busiest keys and the pause, linked to its workflow', async () => {
    requireTestProgram(debianChromium);
    const engine = testEngine(database().url, { workflows: rateWorkflows, rateLimits });
    const api = await startApi(database().url, { engineInstance: engine });
    const origin = new URL(api.url).origin;
    const { pausedWorkflow } = await fillRateLimits(engine, database().url);
    browser = await chromium.launch({ executablePath: debianChromium.path, headless: true });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = collectErrors(page);
    await page.goto(`${origin}/queues`);
    const section = page.locator('[data-region="rate-limits"]');
    const posts = section.locator('article[data-rate-limit="posts"]');
    await posts.waitFor(shows);
    await expect(section.locator('h2').textContent()).resolves.toBe('Rate limits');
    await expect(posts.locator('.rate-summary').textContent()).resolves.toBe(
      '3 per 1 min per key; 5 spent within the period over 3 keys, 2 limited now.',
    );
    await expect(
      posts
        .locator('tbody tr')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-key'))),
    ).resolves.toEqual(['acme', 'zed', 'bolt']);
    const acme = posts.locator('tr[data-key="acme"]');
    await expect(acme.locator('.spent').textContent()).resolves.toBe('3/3');
    await expect(acme.locator('.next-slot time').count()).resolves.toBe(1);
    await expect(posts.locator('tr[data-key="bolt"] .next-slot').textContent()).resolves.toBe(
      'now',
    );
    const zed = posts.locator('tr[data-key="zed"]');
    await expect(zed.locator('.paused').textContent()).resolves.toMatch(
      /^until .+ UTC by a step of workflow \S{8}: HTTP 429$/,
    );
    await expect(
      section.locator('article[data-rate-limit="exports"] .rate-summary').textContent(),
    ).resolves.toBe('100 per 1 h per key; 0 spent within the period over 0 keys, 0 limited now.');
    await zed.locator('.paused a').click();
    await page.waitForURL(`${origin}/workflows/${pausedWorkflow}`);
    expect(errors).toEqual([]);
  }, 60_000);
});
