/**
 * The attribute filter (R55) in headless Chromium against a real server and engine: the
 * operator filters the workflow list by one attribute through the form, then by two (the
 * form's spare field), and the URL, the caption and the rows follow; a workflow submitted
 * meanwhile appears live only when it matches; from a workflow's page, clicking one of its
 * attributes lists the workflows that share it; a filter that is not key=value is refused
 * with the page's error and changes nothing. The HTTP test beside it
 * (dashboard-attributes.test.ts) checks the markup, typed values and paging.
 */
import { defineWorkflow, step } from '@causeway/workflow';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chromium as debianChromium, requireTestProgram } from '../../scripts/test-programs';
import { startApi } from '../api/helpers';
import { useTestDatabase } from '../helpers/database';
import { collectErrors } from './fixtures/page-errors';

const database = useTestDatabase();
const shows = { timeout: 20_000 };

/** No worker serves its queue: every workflow stays where admission put it. */
const labelled = defineWorkflow({
  name: 'browse-attr',
  input: z.object({ label: z.string() }),
  steps: { only: step({ queue: 'q-browse-attr', run: () => ({ done: true }) }) },
});

let browser: Browser | null = null;
afterEach(async () => {
  await browser?.close();
  browser = null;
});

/** The ids of the rows the list shows, top to bottom. */
function listed(page: Page): Promise<(string | null)[]> {
  return page
    .locator('[data-region="workflows"] tr[data-workflow-id]')
    .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-workflow-id')));
}

/** The `attr` parameters of the page's URL, in order. */
const attrsOf = (page: Page) => new URL(page.url()).searchParams.getAll('attr');

const caption = (page: Page) => page.locator('[data-region="workflows"] caption').textContent();

describe('the attribute filter in Chromium', () => {
  it('filters by one and by two attributes, live, and from a workflow’s attribute', async () => {
    requireTestProgram(debianChromium);
    const api = await startApi(database().url, { engine: { workflows: [labelled] } });
    const origin = new URL(api.url).origin;
    const submit = async (label: string, attributes: Record<string, string | number | boolean>) =>
      (await api.engine.submit('browse-attr', { label }, { attributes })).workflow.id;
    const acmeFive = await submit('a', { tenant: 'acme', tier: 5 });
    const acmeTextFive = await submit('b', { tenant: 'acme', tier: '5' });
    const globexFive = await submit('c', { tenant: 'globex', tier: 5 });
    const acmeGold = await submit('d', { tenant: 'acme', tier: 'gold', region: 'eu' });

    browser = await chromium.launch({ executablePath: debianChromium.path, headless: true });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = collectErrors(page);
    await page.goto(`${origin}/`);
    await page.locator('[data-region="workflows"] tr[data-workflow-id]').first().waitFor(shows);
    await expect(listed(page)).resolves.toEqual([acmeGold, globexFive, acmeTextFive, acmeFive]);
    // Each row names its workflow's attributes, as the filter reads them.
    await expect(
      page.locator(`tr[data-workflow-id="${acmeTextFive}"] .attributes`).textContent(),
    ).resolves.toBe('tenant=acme tier="5"');

    // One attribute, typed into the form's only attribute field.
    const form = page.getByRole('search', { name: 'Filter workflows' });
    await expect(form.getByLabel('Attribute').count()).resolves.toBe(1);
    await form.getByLabel('Attribute').fill('tenant=acme');
    await form.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((target) => target.searchParams.getAll('attr').includes('tenant=acme'));
    expect(attrsOf(page)).toEqual(['tenant=acme']);
    await expect(listed(page)).resolves.toEqual([acmeGold, acmeTextFive, acmeFive]);
    await expect(caption(page)).resolves.toBe(
      'Workflows with tenant=acme in any state, newest first: 3',
    );

    // Live: a globex workflow never shows; an acme one appears without a reload. The globex one is
    // submitted first, so the refresh that shows the acme one has seen it too.
    const globexLater = await submit('e', { tenant: 'globex', tier: 5 });
    const acmeLater = await submit('f', { tenant: 'acme', tier: 5 });
    await page.locator(`tr[data-workflow-id="${acmeLater}"]`).waitFor(shows);
    await expect(listed(page)).resolves.toEqual([acmeLater, acmeGold, acmeTextFive, acmeFive]);
    expect(await listed(page)).not.toContain(globexLater);

    // Two attributes: the first field keeps tenant=acme, the spare one below takes the second.
    const fields = form.getByLabel('Attribute');
    await expect(fields.count()).resolves.toBe(2);
    await expect(fields.nth(0).inputValue()).resolves.toBe('tenant=acme');
    await expect(fields.nth(1).inputValue()).resolves.toBe('');
    await fields.nth(1).fill('tier=5');
    await fields.nth(1).press('Enter');
    await page.waitForURL((target) => target.searchParams.getAll('attr').length === 2);
    expect(attrsOf(page)).toEqual(['tenant=acme', 'tier=5']);
    // The number 5, not the string "5": acmeTextFive is not listed.
    await expect(listed(page)).resolves.toEqual([acmeLater, acmeFive]);
    await expect(caption(page)).resolves.toBe(
      'Workflows with tenant=acme and tier=5 in any state, newest first: 2',
    );
    await expect(form.getByLabel('Attribute').count()).resolves.toBe(3);

    // A second value for a key already given matches nothing a workflow can have: refused,
    // with the reason, the three values kept in the form, rather than one of them dropped.
    await form.getByLabel('Attribute').nth(2).fill('tenant=globex');
    const [twice] = await Promise.all([
      page.waitForResponse((response) => new URL(response.url()).pathname === '/'),
      form.getByLabel('Attribute').nth(2).press('Enter'),
    ]);
    expect(twice.status()).toBe(400);
    await expect(page.locator('main .problem').textContent()).resolves.toContain(
      'the attribute filter gives tenant twice',
    );
    await expect(listed(page)).resolves.toEqual([]);
    await expect(
      form
        .getByLabel('Attribute')
        .evaluateAll((inputs) => inputs.map((input) => (input as HTMLInputElement).value)),
    ).resolves.toEqual(['tenant=acme', 'tier=5', 'tenant=globex', '']);

    // Two attributes nothing has together: no rows, and the page says why.
    await page.goto(
      `${origin}/?attr=${encodeURIComponent('region=eu')}&attr=${encodeURIComponent('tier=5')}`,
    );
    await expect(listed(page)).resolves.toEqual([]);
    await expect(page.locator('[data-region="workflows"] p.empty').textContent()).resolves.toBe(
      'No workflow is stored with region=eu and tier=5. New ones appear here as they are submitted.',
    );

    // From a workflow's page: its attributes are links; tier=5 lists every workflow with it.
    await page.goto(`${origin}/workflows/${acmeFive}`);
    const facts = page.locator('[data-region="summary"] dl.facts');
    await facts.waitFor(shows);
    await expect(facts.locator('a.attribute').allTextContents()).resolves.toEqual([
      'tenant=acme',
      'tier=5',
    ]);
    await facts.getByRole('link', { name: 'tier=5' }).click();
    await page.waitForURL((target) => target.pathname === '/' && target.search !== '');
    expect(attrsOf(page)).toEqual(['tier=5']);
    await expect(listed(page)).resolves.toEqual([acmeLater, globexLater, globexFive, acmeFive]);
    await expect(form.getByLabel('Attribute').first().inputValue()).resolves.toBe('tier=5');
    // And from the list back to one of them by its name.
    await page
      .locator(`tr[data-workflow-id="${globexFive}"]`)
      .getByRole('link', { name: 'browse-attr' })
      .click();
    await page.waitForURL(`${origin}/workflows/${globexFive}`);
    await expect(facts.locator('a.attribute').allTextContents()).resolves.toEqual([
      'tenant=globex',
      'tier=5',
    ]);
    // The refused page's 400, and nothing else.
    const status400 = expect.stringContaining('status of 400');
    expect(errors).toEqual([status400]);

    // A filter that is not key=value: refused with 400 and the reason, the value kept.
    await page.goto(`${origin}/`);
    await form.getByLabel('Attribute').fill('tenant');
    const [refused] = await Promise.all([
      page.waitForResponse((response) => new URL(response.url()).pathname === '/'),
      form.getByRole('button', { name: 'Filter' }).click(),
    ]);
    expect(refused.status()).toBe(400);
    await expect(page.locator('main .problem').textContent()).resolves.toContain(
      'is not key=value',
    );
    await expect(form.getByLabel('Attribute').first().inputValue()).resolves.toBe('tenant');
    await expect(listed(page)).resolves.toEqual([]);
    expect(errors).toEqual([status400, status400]);
  });
});
