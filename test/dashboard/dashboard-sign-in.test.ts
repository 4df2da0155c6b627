/**
 * The dashboard's sign-in in headless Chromium (Debian's `chromium`, driven by playwright-core)
 * against a server others can reach (it listens on 0.0.0.0; the browser comes through
 * 127.0.0.1), whose reads need a token: the page asks to sign in and shows no data; a wrong
 * token is refused and said so; the right one loads the list, which then follows the stream
 * live; the token survives a reload in the same tab but not into another tab; it is never in
 * a URL; signing out drops it and the data with it.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { publishNote } from '../../examples/publish-note/workflow';
import { aliceToken, startApi } from '../api/helpers';
import { useTestDatabase } from '../helpers/database';

const database = useTestDatabase();
const chromiumPath = '/usr/bin/chromium';
/** Each wait for something the page must show; far above what it takes, far below the test's. */
const shows = { timeout: 20_000 };
const tokenKey = 'causeway.operatorToken';

let browser: Browser | null = null;
afterEach(async () => {
  await browser?.close();
  browser = null;
});

async function openBrowser(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `This test drives Debian's Chromium at ${chromiumPath}, which is missing. ` +
        'Install it with `apt-get install chromium` (as root; .ci/run does this in CI).',
    );
  }
  return chromium.launch({ executablePath: chromiumPath, headless: true });
}

/** Every URL the page asked for, and its console and page errors. */
function watch(page: Page) {
  const urls: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => urls.push(request.url()));
  page.on('console', (message) => {
    // The refused reads are 401s by design; anything else is a fault.
    if (message.type() === 'error' && !message.text().includes('401')) errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return { urls, errors };
}

const storedToken = (page: Page) => page.evaluate((key) => sessionStorage.getItem(key), tokenKey);

describe('signing in to the dashboard of a server whose reads need a token', () => {
  it('asks for a token, refuses a wrong one, keeps the right one for the tab, and signs out', {
    timeout: 90_000,
  }, async () => {
    browser = await openBrowser();
    const api = await startApi(database().url, {
      engine: { workflows: [publishNote] },
      host: '0.0.0.0',
      api: { feed: { pollIntervalMs: 100 } },
    });
    const origin = new URL(api.url).origin;
    const first = await api.engine.submit('publish-note', { noteId: 'signed-in-only', version: 1 });
    const context = await browser.newContext();
    const page = await context.newPage();
    const seen = watch(page);

    // 1. No token: the sign-in form, and none of the data.
    await page.goto(`${origin}/`);
    const signIn = page.locator('form[data-sign-in]');
    await signIn.waitFor(shows);
    await expect(page.locator('#token-form').isVisible()).resolves.toBe(false);
    expect(await page.content()).not.toContain(first.workflow.id);

    // 2. A wrong token is refused, said so, and not kept.
    await signIn.locator('input[name="token"]').fill('wrong-token-0123456789abcdef');
    await signIn.locator('button[type="submit"]').click();
    await page.locator('[data-sign-in-error]', { hasText: 'not valid' }).waitFor(shows);
    await expect(storedToken(page)).resolves.toBeNull();
    expect(await page.content()).not.toContain(first.workflow.id);

    // 3. The right token: the list, then a workflow submitted afterwards appears live.
    await signIn.locator('input[name="token"]').fill(aliceToken);
    await signIn.locator('button[type="submit"]').click();
    await page.locator(`tr[data-workflow-id="${first.workflow.id}"]`).waitFor(shows);
    await expect(signIn.count()).resolves.toBe(0);
    await expect(page.locator('#token-state').textContent()).resolves.toMatch(/Token set/);
    await page.locator('#live-state', { hasText: /^Live/ }).waitFor(shows);
    const second = await api.engine.submit('publish-note', { noteId: 'arrives-live', version: 1 });
    await page.locator(`tr[data-workflow-id="${second.workflow.id}"]`).waitFor(shows);

    // 4. A reload in the same tab keeps the token: the data comes back without typing it.
    await page.reload();
    await page.locator(`tr[data-workflow-id="${second.workflow.id}"]`).waitFor(shows);
    await expect(storedToken(page)).resolves.toBe(aliceToken);
    // So does a workflow's own page, reached by its link.
    await page.locator(`tr[data-workflow-id="${first.workflow.id}"] a`).first().click();
    await page.waitForURL(`${origin}/workflows/${first.workflow.id}`);
    await page.locator('[data-region="summary"]').waitFor(shows);
    await page.locator('#live-state', { hasText: /^Live/ }).waitFor(shows);

    // 5. Another tab has its own session: it asks to sign in.
    const other = await context.newPage();
    await other.goto(`${origin}/`);
    await other.locator('form[data-sign-in]').waitFor(shows);
    await expect(storedToken(other)).resolves.toBeNull();
    await other.close();

    // 6. Signing out drops the token and the data with it.
    await page.locator('#token-forget').click();
    await page.locator('form[data-sign-in]').waitFor(shows);
    await expect(storedToken(page)).resolves.toBeNull();
    expect(await page.content()).not.toContain('signed-in-only');

    // The token never went into a URL (logs and history keep those).
    expect(seen.urls.filter((url) => url.includes(aliceToken) || url.includes('token='))).toEqual(
      [],
    );
    expect(seen.errors).toEqual([]);
  });
});
