/**
 * The dashboard end to end in headless Chromium (Debian's `chromium`, driven by
 * playwright-core), against a real server, engine, worker and platform running publish-note:
 * the list shows a workflow submitted after it loaded, without a reload; its page shows the
 * step graph; the approval is sent through the page's form with the operator token and a
 * reason (required there), which is stored on the event, and the timeline, the explanation and
 * the step's events show the edge with the operator as actor and the reason; another workflow
 * is cancelled through the page, by keyboard. Along the way it takes the workflow page's
 * screenshot, in a temporary folder; `pnpm docs:images` has it replace the picture the README
 * shows (docs/images/dashboard-workflow.png), which a plain run leaves alone.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { chromium as debianChromium, requireTestProgram } from '../../scripts/test-programs';
import { aliceToken } from '../api/helpers';
import { useTestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';
import { collectErrors } from './fixtures/page-errors';
import { startPublishStack } from './fixtures/publish-stack';

const database = useTestDatabase();
const docsPicture = fileURLToPath(
  new URL('../../docs/images/dashboard-workflow.png', import.meta.url),
);
/** Set by `pnpm docs:images`: only then does the screenshot replace the docs' picture. */
const refreshDocsPicture = process.env.CAUSEWAY_DOCS_IMAGES === 'write';
/** Each wait for something the page must show; far above what it takes, far below the test's. */
const shows = { timeout: 20_000 };
const approvalReason = 'read it twice, "looks good" <ok>';

let browser: Browser | null = null;
let screenshotDir: string | null = null;
afterEach(async () => {
  await browser?.close();
  browser = null;
  if (screenshotDir !== null) rmSync(screenshotDir, { recursive: true, force: true });
  screenshotDir = null;
});

async function openBrowser(): Promise<Browser> {
  requireTestProgram(debianChromium);
  return chromium.launch({ executablePath: debianChromium.path, headless: true });
}

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

async function waitLive(page: Page): Promise<void> {
  await page.locator('#live-state', { hasText: /^Live/ }).waitFor(shows);
}

describe('the dashboard in headless Chromium', () => {
  it('shows a workflow appear live, its graph, sends its approval and cancels another', async () => {
    browser = await openBrowser();
    const docsPictureBefore = sha256(docsPicture);
    screenshotDir = mkdtempSync(join(tmpdir(), 'causeway-dashboard-'));
    const screenshotPath = refreshDocsPicture
      ? docsPicture
      : join(screenshotDir, 'dashboard-workflow.png');
    const stack = await startPublishStack(database().url);
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    const errors = collectErrors(page);

    // 1. The list, live before anything is submitted.
    await page.goto(`${stack.origin}/`);
    await expect(page.title()).resolves.toBe('Workflows · Causeway');
    await waitLive(page);
    await page.evaluate(() => {
      (window as unknown as { loadedOnce: boolean }).loadedOnce = true;
    });

    // 2. Submitted after the page loaded: the rows appear without a reload.
    const approved = await stack.engine.submit('publish-note', { noteId: 'n-approve', version: 1 });
    const cancelled = await stack.engine.submit('publish-note', { noteId: 'n-cancel', version: 1 });
    for (const id of [approved.workflow.id, cancelled.workflow.id]) {
      await page.locator(`tr[data-workflow-id="${id}"]`).waitFor(shows);
    }
    expect(
      await page.evaluate(() => (window as unknown as { loadedOnce?: boolean }).loadedOnce),
    ).toBe(true);
    // Screen readers hear it too, through the aria-live region.
    await page
      .locator('#announcements p', {
        hasText: `Workflow ${approved.workflow.id.slice(-8)} new → queued (submitted)`,
      })
      .first()
      .waitFor({ ...shows, state: 'attached' });

    // 3. Its page: one SVG node per step, each classed by its task's state; the graph follows
    // the workflow live until the approval step waits.
    await page.locator(`tr[data-workflow-id="${approved.workflow.id}"] a`).click();
    await page.waitForURL(`${stack.origin}/workflows/${approved.workflow.id}`);
    await waitLive(page);
    const nodes = page.locator('svg.graph g.node');
    await expect(
      nodes.evaluateAll((all) => all.map((node) => node.getAttribute('data-step'))),
    ).resolves.toEqual(['render', 'review', 'approval', 'publish', 'syndicate']);
    for (const node of await nodes.all()) {
      expect(await node.getAttribute('class')).toMatch(
        /^node state-(pending|queued|leased|awaiting_receipt|waiting|succeeded)( waits)?$/,
      );
    }
    await page.locator('svg.graph g.node.state-waiting[data-step="approval"]').waitFor(shows);
    await expect(
      page.locator('g.node[data-step="approval"] text.marker').textContent(),
    ).resolves.toBe('waits for note.approved');
    expect(await page.locator('svg.graph path.edge').count()).toBe(4);
    // What holds it: the wait, with its facts, and the step behind it.
    const blockers = page.locator('[data-region="blockers"] li');
    await blockers.locator('code', { hasText: 'waiting_for_event' }).waitFor(shows);
    await expect(
      blockers.evaluateAll((items) => items.map((li) => li.getAttribute('data-code'))),
    ).resolves.toEqual(['waiting_for_event', 'upstream_pending', 'upstream_pending']);
    await expect(blockers.first().textContent()).resolves.toContain(
      'note.approved (key n-approve)',
    );
    await page.screenshot({ path: screenshotPath });
    expect(readFileSync(screenshotPath).subarray(1, 4).toString()).toBe('PNG');

    // 4. The approval through the page's form. Without a token the API refuses, and it shows.
    const approval = page.locator('details[data-step="approval"]');
    await approval.locator('button[data-dialog="send-event"]').click();
    const dialog = page.locator('#dialog-send-event');
    await expect(dialog.locator('input[name="name"]').inputValue()).resolves.toBe('note.approved');
    await expect(dialog.locator('input[name="key"]').inputValue()).resolves.toBe('n-approve');
    await expect(dialog.locator('[data-token-needed]').isVisible()).resolves.toBe(true);
    await dialog
      .locator('textarea[name="payload"]')
      .fill('{"editor":"alice","verdict":"approved"}');
    await dialog.locator('textarea[name="reason"]').fill(approvalReason);
    await dialog.locator('button.confirm').click();
    await dialog.locator('[data-error]', { hasText: 'UNAUTHENTICATED' }).waitFor(shows);
    const stillWaiting = await stack.engine.getWorkflow(approved.workflow.id);
    expect(stillWaiting?.tasks.find((task) => task.step === 'approval')?.state).toBe('waiting');
    await dialog.locator('button[data-close]').click();

    await page.locator('#token-input').fill(aliceToken);
    await page.locator('#token-form button[type="submit"]').click();
    await expect(page.locator('#token-state').textContent()).resolves.toMatch(/Token set/);
    await approval.locator('button[data-dialog="send-event"]').click();
    await expect(dialog.locator('[data-token-needed]').isVisible()).resolves.toBe(false);
    await dialog
      .locator('textarea[name="payload"]')
      .fill('{"editor":"alice","verdict":"approved"}');
    // The reason is required, as for every action: the form does not go out without one.
    const reasonField = dialog.locator('textarea[name="reason"]');
    await expect(reasonField.inputValue()).resolves.toBe('');
    await dialog.locator('button.confirm').click();
    await expect(
      reasonField.evaluate((e) => (e as HTMLTextAreaElement).validity.valueMissing),
    ).resolves.toBe(true);
    expect(await dialog.isVisible()).toBe(true);
    await reasonField.fill(approvalReason);
    await dialog.locator('button.confirm').click();
    await page.locator('#outcome', { hasText: 'completed: approval succeeded' }).waitFor(shows);
    expect(await dialog.isVisible()).toBe(false);
    // Stored on the event, with the operator as its sender.
    const events = await query<{ sent_by: string; reason: string | null }>(
      database().url,
      `select e.sent_by, e.reason from causeway_events as e
         join causeway_event_deliveries as d on d.event_id = e.id
         join causeway_tasks as t on t.id = d.task_id
        where t.workflow_id = $1`,
      [approved.workflow.id],
    );
    expect(events).toEqual([{ sent_by: 'operator:alice', reason: approvalReason }]);

    // 5. The edge appears in the timeline with the operator as its actor; the workflow goes on.
    const received = page
      .locator('[data-region="timeline"] tr[data-reason="event_received"]')
      .first();
    await received.waitFor(shows);
    await expect(received.locator('td.actor').textContent()).resolves.toBe('operator:alice');
    // The reason shows on the edge, in the explanation and in the step's events received.
    await expect(received.locator('code.detail').textContent()).resolves.toContain(
      JSON.stringify({ operatorReason: approvalReason }).slice(1, -1),
    );
    await page
      .locator('[data-region="explanation"]', {
        hasText: `approval: event received by alice: "${approvalReason}"`,
      })
      .waitFor(shows);
    await expect(approval.locator('table.events td.event-reason').textContent()).resolves.toBe(
      approvalReason,
    );
    await page.locator('[data-region="summary"] h1 .state-succeeded').waitFor(shows);
    const settled = await stack.engine.getWorkflow(approved.workflow.id);
    const receivedEdges = settled?.transitions.filter((row) => row.reason === 'event_received');
    // The step's edge and the workflow's; the step's carries the reason.
    expect(receivedEdges?.map((row) => row.actor)).toEqual(['operator:alice', 'operator:alice']);
    expect(receivedEdges?.find((row) => row.step === 'approval')?.detail?.operatorReason).toBe(
      approvalReason,
    );

    // 6. Cancel the other one through its page, by keyboard, with a reason.
    await page.locator('nav a', { hasText: 'Workflows' }).click();
    await page.locator(`tr[data-workflow-id="${cancelled.workflow.id}"] a`).click();
    await page.waitForURL(`${stack.origin}/workflows/${cancelled.workflow.id}`);
    // It waits for its own approval by now (no step holds a lease): the cancel is immediate.
    await page.locator('svg.graph g.node.state-waiting[data-step="approval"]').waitFor(shows);
    await page.locator('button[data-dialog="cancel-workflow"]').focus();
    await page.keyboard.press('Enter');
    const cancelDialog = page.locator('#dialog-cancel-workflow');
    await expect(
      cancelDialog.locator('textarea[name="reason"]').evaluate((e) => e === document.activeElement),
    ).resolves.toBe(true);
    await page.keyboard.type('withdrawn by its author');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.locator('[data-region="summary"] h1 .state-cancelled').waitFor(shows);
    await page.locator('#outcome', { hasText: 'Workflow cancel' }).waitFor(shows);
    const gone = await stack.engine.getWorkflow(cancelled.workflow.id);
    expect(gone?.state).toBe('cancelled');
    const cancelEdges = gone?.transitions.filter((row) => row.actor === 'operator:alice') ?? [];
    expect(cancelEdges.length).toBeGreaterThan(0);
    expect(cancelEdges.map((row) => row.detail?.operatorReason)).toContain(
      'withdrawn by its author',
    );
    const timelineActors = await page
      .locator('[data-region="timeline"] td.actor')
      .evaluateAll((cells) => cells.map((cell) => cell.textContent));
    expect(timelineActors).toContain('operator:alice');

    // The only failed request is the refused mutation without a token.
    expect(errors).toEqual([
      'Failed to load resource: the server responded with a status of 401 (Unauthorized)',
    ]);
    // A run leaves the tracked picture as it was: only `pnpm docs:images` replaces it.
    if (!refreshDocsPicture) {
      expect(sha256(docsPicture), `${docsPicture} changed`).toBe(docsPictureBefore);
    }
  }, 120_000);
});
