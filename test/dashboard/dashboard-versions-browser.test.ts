/**
 * The workers page's Versions section (R54) in headless Chromium against a real server and
 * engines: the operator opens the workers page from the navigation and reads each version's
 * status and in-flight count (the latest `serving`, an older one with nothing left `drained`,
 * one whose workflows no live worker serves `draining` with its count); a deploy that defines
 * the draining version finishes its workflows, and after a reload that version is `drained`,
 * served by the new worker. The HTTP test beside it (dashboard-versions.test.ts) checks the
 * markup and escaping.
 */
import { workflow } from '@causeway/workflow';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chromium as debianChromium, requireTestProgram } from '../../scripts/test-programs';
import { startApi } from '../api/helpers';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { collectErrors } from './fixtures/page-errors';

const database = useTestDatabase();
const shows = { timeout: 20_000 };

const input = z.object({ n: z.number() });
const versionOf = (version: string, queue: string) =>
  workflow({ name: 'browse-versioned', input, version })
    .step('render', { queue, run: () => version })
    .build();

let browser: Browser | null = null;
afterEach(async () => {
  await browser?.close();
  browser = null;
});

/** What the operator reads in a version's row: each cell's visible text. */
async function rowText(page: Page, key: string): Promise<string[]> {
  const row = page.locator(`[data-region="versions"] tr[data-version="${key}"]`);
  return (await row.locator('th, td').allInnerTexts()).map((text) =>
    text.replace(/\s+/g, ' ').trim(),
  );
}

/** The rows of the section, in the order the page lists them. */
async function versionKeys(page: Page): Promise<(string | null)[]> {
  return page
    .locator('[data-region="versions"] tr[data-version]')
    .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-version')));
}

describe('the Versions section in Chromium', () => {
  it('shows serving, draining and drained versions with their in-flight counts', async () => {
    requireTestProgram(debianChromium);
    const url = database().url;
    const api = await startApi(url, {
      engine: { workflows: [versionOf('v1', 'q-browse-new'), versionOf('v2', 'q-browse-new')] },
    });
    await api.engine.startWorker({ queues: ['q-browse-idle'], concurrency: 1 });
    // Yesterday's deploy: v0 was the latest; two of its workflows are still in flight and no
    // live worker defines v0 any more.
    const yesterday = testEngine(url, { workflows: [versionOf('v0', 'q-browse-old')] });
    await yesterday.submit('browse-versioned', { n: 1 });
    await yesterday.submit('browse-versioned', { n: 2 });
    await yesterday.close();
    const origin = new URL(api.url).origin;

    browser = await chromium.launch({ executablePath: debianChromium.path, headless: true });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = collectErrors(page);
    await page.goto(`${origin}/`);
    await page.getByRole('navigation').getByRole('link', { name: 'Workers' }).click();
    await page.waitForURL(`${origin}/workers`);
    const section = page.getByRole('region', { name: 'Versions', exact: true });
    await section.waitFor(shows);
    await expect(section.getByRole('heading', { level: 2 }).textContent()).resolves.toBe(
      'Versions',
    );
    // This process's versions first (in its order), then what only stored work knows.
    await expect(versionKeys(page)).resolves.toEqual([
      'browse-versioned@v1',
      'browse-versioned@v2',
      'browse-versioned@v0',
    ]);
    const holder = api.engine.holder;
    await expect(rowText(page, 'browse-versioned@v2')).resolves.toEqual([
      'browse-versioned',
      'v2 latest here',
      'serving',
      '0',
      holder,
    ]);
    await expect(rowText(page, 'browse-versioned@v1')).resolves.toEqual([
      'browse-versioned',
      'v1',
      'drained: safe to delete',
      '0',
      holder,
    ]);
    await expect(rowText(page, 'browse-versioned@v0')).resolves.toEqual([
      'browse-versioned',
      'v0',
      'draining',
      '2',
      'none live',
    ]);
    // Each status carries the colour of the state it borrows, and its word beside it.
    await expect(
      section
        .locator('tr[data-version] span.state')
        .evaluateAll((badges) => badges.map((badge) => badge.className)),
    ).resolves.toEqual(['state state-succeeded', 'state state-running', 'state state-waiting']);

    // Today's deploy also defines v0 (its latest is v2): its worker finishes v0's workflows.
    const today = testEngine(url, {
      workflows: [versionOf('v0', 'q-browse-old'), versionOf('v2', 'q-browse-new')],
    });
    await today.startWorker({ queues: ['q-browse-old'], concurrency: 2 });
    await waitFor(
      async () => {
        const rows = await query<{ n: string }>(
          url,
          "select count(*) as n from causeway_workflows where version = 'v0' and state = 'succeeded'",
        );
        return rows[0]?.n === '2';
      },
      { timeoutMs: 15_000, description: "v0's two workflows succeeded" },
    );
    // The page is not live: the operator reloads it through its link.
    await Promise.all([
      page.waitForEvent('load'),
      page.getByRole('link', { name: 'Reload' }).click(),
    ]);
    await expect(rowText(page, 'browse-versioned@v0')).resolves.toEqual([
      'browse-versioned',
      'v0',
      'drained: safe to delete',
      '0',
      today.holder,
    ]);
    // v2 is the latest of both live engines: both serve it, in either order.
    const v2 = await rowText(page, 'browse-versioned@v2');
    expect(v2.slice(0, 4)).toEqual(['browse-versioned', 'v2 latest here', 'serving', '0']);
    expect(v2[4]?.split(' ').sort()).toEqual([holder, today.holder].sort());
    // And the workers table above lists the new worker beside the API's.
    await expect(
      page
        .locator('[data-region="workers"] tr[data-holder]')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-holder')).sort()),
    ).resolves.toEqual([holder, today.holder].sort());
    expect(errors).toEqual([]);
  });
});
