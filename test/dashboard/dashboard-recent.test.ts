/**
 * What a new user sees after `pnpm start`: the dashboard opens on the recent workflows of every
 * state, newest first, so a workflow that already finished is on the first page.
 */
import { describe, expect, it } from 'vitest';
import { startApi } from '../api/helpers';
import { tickWorkflow } from '../engine/fixtures/schedules';
import { useTestDatabase } from '../helpers/database';
import { waitFor } from '../helpers/wait-for';

const database = useTestDatabase();

const ids = (text: string) =>
  [...text.matchAll(/<tr data-workflow-id="([^"]+)"/g)].map((match) => match[1]);

describe('the dashboard list by default', () => {
  it('shows finished and queued workflows together, newest first', async () => {
    const api = await startApi(database().url, { engine: { workflows: [tickWorkflow] } });
    const origin = new URL(api.url).origin;
    const { workflow: finished } = await api.engine.submit('tick-report', { report: 'first' });
    const worker = await api.engine.startWorker({ queues: ['q-schedules'], concurrency: 1 });
    await waitFor(async () => (await api.engine.getWorkflow(finished.id))?.state === 'succeeded');
    await worker.stop();
    const { workflow: queued } = await api.engine.submit('tick-report', { report: 'second' });

    const page = await fetch(`${origin}/`);
    const text = await page.text();
    expect(page.status).toBe(200);
    expect(ids(text)).toEqual([queued.id, finished.id]);
    expect(text).toContain('Workflows in any state, newest first');
    expect(text).toContain('<option value="all" selected>');
    // The state filter is still there: `active` leaves the finished one out.
    const active = await (await fetch(`${origin}/?state=active`)).text();
    expect(ids(active)).toEqual([queued.id]);
  });
});
