/**
 * A task's attempts (R56) on its workflow's page, in headless Chromium against a real server
 * and two engines. The operator watches a step held by engine A: one attempt, running. The
 * database clock moves past A's lease; B's sweeper takes the task and B's worker finishes it,
 * and the open page shows, without a reload, the first attempt `lease lost` and the second
 * settled. Then A's stalled handler returns: its result is refused, which writes no edge, so
 * the operator reloads and sees the first attempt `stale`, saying its result was refused and
 * to check the platform, and the explanation naming it. The HTTP check of the same row is in
 * test/reliability/zombie-attempt.test.ts.
 */
import type { WorkerHandle } from '@causeway/engine';
import { defineWorkflow, step } from '@causeway/workflow';
import { type Browser, chromium, type Locator } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chromium as debianChromium, requireTestProgram } from '../../scripts/test-programs';
import { startApi } from '../api/helpers';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { collectErrors } from './fixtures/page-errors';

const database = useTestDatabase();
const shows = { timeout: 20_000 };

/** The first run waits for the test, whatever its signal says (a stalled handler); later ones return. */
let releaseFirst: () => void = () => undefined;
const firstReleased = new Promise<void>((resolve) => {
  releaseFirst = resolve;
});
let runs = 0;
const held = defineWorkflow({
  name: 'browse-held',
  input: z.object({ label: z.string() }),
  steps: {
    only: step({
      queue: 'q-browse-held',
      reentrant: true,
      maxAttempts: 3,
      backoff: { initialIntervalMs: 0, maximumIntervalMs: 0 },
      run: async () => {
        runs += 1;
        const run = runs;
        if (run === 1) await firstReleased;
        return { run };
      },
    }),
  },
});

let browser: Browser | null = null;
afterEach(async () => {
  releaseFirst();
  await browser?.close();
  browser = null;
  await setDatabaseClockOffset(database().url, 0);
});

/** Each row of the attempts table as the operator reads it: its cells' visible text. */
async function ledger(task: Locator): Promise<string[][]> {
  return task
    .locator('table.attempt-ledger tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) =>
        [...row.querySelectorAll('td')].map((cell) =>
          (cell.textContent ?? '').replace(/\s+/g, ' ').trim(),
        ),
      ),
    );
}

/** The cells that do not hold times: attempt, epoch, holder, outcome, reason. */
const untimed = (rows: string[][]) =>
  rows.map(([attempt, epoch, holder, , , outcome, reason]) => [
    attempt,
    epoch,
    holder,
    outcome,
    reason,
  ]);

async function taskState(url: string, workflowId: string): Promise<string | undefined> {
  const [task] = await query<{ state: string }>(
    url,
    'select state from causeway_tasks where workflow_id = $1',
    [workflowId],
  );
  return task?.state;
}

describe('the attempts of a task in Chromium', () => {
  it('shows a lost lease live, then the late result refused as a stale attempt', async () => {
    requireTestProgram(debianChromium);
    const url = database().url;
    const api = await startApi(url, { engine: { workflows: [held] } });
    const a = api.engine;
    const workerA: WorkerHandle = await a.startWorker({
      queues: ['q-browse-held'],
      concurrency: 1,
      sweeper: false,
    });
    const { workflow } = await a.submit('browse-held', { label: 'held' });
    await waitFor(async () => (await taskState(url, workflow.id)) === 'leased', {
      description: 'the task leased by A',
    });
    const stalled = [...workerA.running].find((attempt) => attempt.fence.epoch === 1);
    if (stalled === undefined) throw new Error('no running attempt holds the first lease');
    const origin = new URL(api.url).origin;

    browser = await chromium.launch({ executablePath: debianChromium.path, headless: true });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = collectErrors(page);
    await page.goto(`${origin}/workflows/${workflow.id}`);
    // Not finished: its details are open, the one attempt running, not yet ended.
    const task = page.locator('details.task[data-step="only"]');
    await task.locator('table.attempt-ledger').waitFor(shows);
    await expect(task.getAttribute('open')).resolves.toBe('');
    const running = await ledger(task);
    expect(untimed(running)).toEqual([['1', '1', a.holder, 'running', '']]);
    expect(running[0]?.[4]).toBe('—');
    await page.locator('#live-state', { hasText: 'Live' }).waitFor(shows);

    // Ten seconds on by the database clock: A's two-second lease has run out; B's sweeper
    // takes the task (reentrant: queued again) and B's worker runs it to the end.
    const b = testEngine(url, { workflows: [held] });
    await setDatabaseClockOffset(url, 10_000);
    expect(await b.sweep()).toBeGreaterThan(0);
    await b.startWorker({ queues: ['q-browse-held'], concurrency: 1, sweeper: false });
    await waitFor(async () => (await taskState(url, workflow.id)) === 'succeeded', {
      description: 'the task finished by B',
    });
    // The open page follows without a reload (through B's claim, then its end); the details
    // the operator opened stay open.
    const settled = [
      ['1', '1', a.holder, 'lease lost', 'lease_expired'],
      ['2', '2', b.holder, 'settled', 'completed'],
    ];
    await expect
      .poll(async () => untimed(await ledger(task)), { timeout: 15_000 })
      .toEqual(settled);
    await expect(task.getAttribute('open')).resolves.toBe('');

    // A's stalled handler returns: its result is refused and recorded, and writes no edge.
    releaseFirst();
    await waitFor(() => !workerA.running.has(stalled), { description: 'the stalled handler' });
    await stalled.written;
    const [refused] = await query<{ refused_at: Date }>(
      url,
      'select refused_at from causeway_stale_results where task_id = $1',
      [stalled.fence.taskId],
    );
    if (refused === undefined) throw new Error("A's late result was not recorded");

    await page.reload();
    // Finished: the details are closed until the operator opens them.
    await task.waitFor(shows);
    await expect(task.getAttribute('open')).resolves.toBeNull();
    await task.locator('summary').click();
    await expect(task.getAttribute('open')).resolves.toBe('');
    const rows = await ledger(task);
    expect(untimed(rows)).toEqual([
      [
        '1',
        '1',
        a.holder,
        expect.stringMatching(
          /^stale: its result came after its lease was lost and was refused \S.*; check the platform for its effect$/,
        ),
        'lease_expired',
      ],
      ['2', '2', b.holder, 'settled', 'completed'],
    ]);
    const staleRow = task.locator('table.attempt-ledger tbody tr').first();
    await expect(staleRow.getAttribute('class')).resolves.toBe('attempt-stale');
    await expect(
      staleRow.locator('td').nth(5).locator('time').getAttribute('datetime'),
    ).resolves.toBe(refused.refused_at.toISOString());
    await expect(page.locator('[data-region="explanation"]').textContent()).resolves.toContain(
      `only: attempt 1 by ${a.holder} finished after its lease was lost; its result was refused; check the platform for its effect`,
    );
    expect(errors).toEqual([]);
  });
});
