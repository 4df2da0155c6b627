/**
 * The queues page (R53) in headless Chromium against a real server and engine: it lists the
 * queues with their pause; the operator pauses one through its dialog with a reason (who and
 * why show on the page and are kept), and resumes it.
 */
import { defineWorkflow, step } from '@causeway/workflow';
import { type Browser, chromium } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chromium as debianChromium, requireTestProgram } from '../../scripts/test-programs';
import { aliceToken, startApi } from '../api/helpers';
import { useTestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';
import { collectErrors } from './fixtures/page-errors';

const database = useTestDatabase();
const shows = { timeout: 20_000 };

const heldWork = defineWorkflow({
  name: 'dashboard-held',
  input: z.object({}),
  steps: { only: step({ queue: 'held', run: () => 'done' }) },
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
});
