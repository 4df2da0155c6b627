/**
 * The tree on the dashboard (R48), in headless Chromium against a real server, engine and
 * worker running the tree of test/engine/tree-workflows.ts: a workflow's page shows each step's
 * children with their counts and links down, a child's page its parent (a link up) and its
 * root; the operator clicks from a parent to a child and back, and from a state's count to the
 * list of the children in that state, which links back to the parent.
 */
import { type Browser, chromium } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { chromium as debianChromium, requireTestProgram } from '../../scripts/test-programs';
import { startApi } from '../api/helpers';
import { treeAtRest } from '../engine/tree-waits';
import { treeWorkflows } from '../engine/tree-workflows';
import { useTestDatabase } from '../helpers/database';
import { collectErrors } from './fixtures/page-errors';

const database = useTestDatabase();
const shows = { timeout: 20_000 };

let browser: Browser | null = null;
afterEach(async () => {
  await browser?.close();
  browser = null;
});

describe('the tree on the dashboard', () => {
  it('goes from a parent to a child and back, and to the children in one state', async () => {
    requireTestProgram(debianChromium);
    const api = await startApi(database().url, { engine: { workflows: treeWorkflows } });
    const worker = await api.engine.startWorker({ queues: ['q-tree'], concurrency: 8 });
    const origin = new URL(api.url).origin;
    const root = (await api.engine.submit('tree-root', { groups: [[-1, 1, 2], [3]] })).workflow.id;
    const { mids, leaves } = await treeAtRest(database().url, root);
    const mid = mids[0] as string;

    browser = await chromium.launch({ executablePath: debianChromium.path, headless: true });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = collectErrors(page);

    // The root's page: its step's children, counted, with links down; it has no parent.
    await page.goto(`${origin}/workflows/${root}`);
    const spread = page.locator('section.step-children[data-step="spread"]');
    await spread.waitFor(shows);
    await expect(spread.locator('h3').textContent()).resolves.toBe(
      'spread: 2 child workflows of tree-mid',
    );
    await expect(spread.locator('p.counts').textContent()).resolves.toBe('2 running');
    await expect(page.locator('a[data-link="parent"]').count()).resolves.toBe(0);
    await expect(
      spread
        .locator('tr[data-workflow-id]')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-workflow-id'))),
    ).resolves.toEqual(mids);

    // Down: the first middle workflow, its parent and root, its leaves and their counts.
    await spread.locator(`tr[data-workflow-id="${mid}"] a[data-link="child"]`).click();
    await page.waitForURL(`${origin}/workflows/${mid}`);
    const up = page.locator('a[data-link="parent"]');
    await expect(up.textContent()).resolves.toBe(`tree-root ${root.slice(-8)}`);
    await expect(page.locator('a[data-link="root"]').getAttribute('href')).resolves.toBe(
      `/workflows/${root}`,
    );
    const fan = page.locator('section.step-children[data-step="fan"]');
    await expect(fan.locator('p.counts').textContent()).resolves.toBe(
      '2 waiting, 1 dead (tolerated 1 of 2)',
    );
    await expect(
      fan.locator('tr[data-workflow-id] td:first-child').allTextContents(),
    ).resolves.toEqual(['0', '1', '2']);
    await expect(page.locator('[data-region="explanation"]').textContent()).resolves.toContain(
      'fan: awaiting 3 child workflows of tree-leaf: 2 waiting, 1 dead (tolerated 1 of 2)',
    );

    // Down to a leaf, and back up by its parent link.
    await fan.locator(`tr[data-workflow-id="${leaves[2]}"] a[data-link="child"]`).click();
    await page.waitForURL(`${origin}/workflows/${leaves[2]}`);
    await expect(page.locator('[data-region="summary"] dl.facts').textContent()).resolves.toMatch(
      /Parent\s*tree-mid \S+, step fan, child #2/,
    );
    await expect(page.locator('[data-region="children"]').innerHTML()).resolves.toBe('');
    await page.locator('a[data-link="parent"]').click();
    await page.waitForURL(`${origin}/workflows/${mid}`);

    // From a state's count to the list of those children, and from there back to the parent.
    await fan.locator('p.child-filters a[data-state="waiting"]').click();
    await page.waitForURL(`${origin}/?parent=${mid}&state=waiting`);
    const rows = page.locator('[data-region="workflows"] tr[data-workflow-id]');
    await expect(
      rows.evaluateAll((all) => all.map((row) => row.getAttribute('data-workflow-id')).sort()),
    ).resolves.toEqual(leaves.slice(1).sort());
    await expect(page.locator('[data-region="workflows"] caption').textContent()).resolves.toMatch(
      new RegExp(`^Workflows that are children of ${mid.slice(-8)} waiting`),
    );
    await page.locator('a[data-link="tree-filter"]').click();
    await page.waitForURL(`${origin}/workflows/${mid}`);
    expect(errors).toEqual([]);
    // A parent id that is not one is refused with the API's code.
    const refused = await page.goto(`${origin}/?parent=nope`);
    expect(refused?.status()).toBe(400);
    await expect(page.locator('main').textContent()).resolves.toContain('BAD_USER_INPUT');
    await worker.stop({ drainMs: 1_000 });
  });
});
