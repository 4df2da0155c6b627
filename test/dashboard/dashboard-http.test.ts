/**
 * The dashboard over plain HTTP: its pages come with a Content-Security-Policy that allows
 * only this origin's script and stylesheet, its assets are served from a fixed set (any other
 * path is a 404), workflow data is shown escaped wherever it lands (input, error, filter),
 * and a server with private reads shows nothing without a token.
 */
import { defineWorkflow, StepError, step } from '@causeway/workflow';
import { workflowVersion } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { contentSecurityPolicy } from '../../packages/api/src/dashboard/dashboard';
import { aliceToken, startApi } from '../api/helpers';
import { morningDigest, tickWorkflow } from '../engine/fixtures/schedules';
import { useTestDatabase } from '../helpers/database';
import { waitFor } from '../helpers/wait-for';

const database = useTestDatabase();

/** Markup that would run if the page inserted it as HTML. */
const hostile = `<script>alert("x")</script><img src=x onerror="alert(1)">`;

const fragile = defineWorkflow({
  name: 'fragile-note',
  input: z.object({ title: z.string() }),
  steps: {
    render: step<{ title: string }>({
      maxAttempts: 1,
      run: (ctx) => {
        throw new StepError('invalid_argument', `cannot render ${ctx.input.title}`);
      },
    }),
  },
});

async function get(origin: string, path: string, init: RequestInit = {}) {
  const response = await fetch(`${origin}${path}`, init);
  return { response, text: await response.text() };
}

/** Every `<script` tag of a page: the dashboard's only script is its own module file. */
function scriptTags(page: string): string[] {
  return [...page.matchAll(/<script\b[^>]*>/gi)].map((match) => match[0]);
}

describe('the dashboard over HTTP', () => {
  it('serves its pages as HTML with the CSP header, and its assets from a fixed set', async () => {
    const api = await startApi(database().url, { engine: { workflows: [fragile] } });
    const origin = new URL(api.url).origin;
    const { response, text } = await get(origin, '/');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(contentSecurityPolicy);
    expect(contentSecurityPolicy).toContain("script-src 'self'");
    expect(contentSecurityPolicy).toContain("default-src 'none'");
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(text).toMatch(/^<!doctype html>/);
    expect(scriptTags(text)).toEqual(['<script type="module" src="/dashboard/dashboard.js">']);

    // Every asset the page and its script refer to is served, with its type and the CSP.
    const script = await get(origin, '/dashboard/dashboard.js');
    const referenced = [
      ...text.matchAll(/(?:href|src)="(\/dashboard\/[^"]+)"/g),
      ...script.text.matchAll(/from '\.\/([^']+)'/g),
    ].map((match) => (match[1]?.startsWith('/') ? match[1] : `/dashboard/${match[1]}`));
    expect(referenced).toEqual(
      expect.arrayContaining([
        '/dashboard/dashboard.css',
        '/dashboard/states.css',
        '/dashboard/dashboard.js',
        '/dashboard/actions.js',
        '/dashboard/live.js',
        '/dashboard/regions.js',
      ]),
    );
    for (const path of referenced) {
      const asset = await get(origin, path);
      expect(asset.response.status, path).toBe(200);
      expect(asset.response.headers.get('content-security-policy')).toBe(contentSecurityPolicy);
      expect(asset.response.headers.get('content-type')).toMatch(
        /^(text\/javascript|text\/css|image\/svg\+xml)/,
      );
      const etag = asset.response.headers.get('etag') as string;
      const again = await fetch(`${origin}${path}`, { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
    }

    for (const path of [
      '/dashboard/nope.js',
      '/dashboard/',
      '/dashboard/dashboard.js.map',
      '/dashboard/%2e%2e/package.json',
      '/dashboard/..%2Fpackage.json',
      '/workflows/not-a-workflow',
      '/workflows/01a23237-3125-73b5-85e6-e236f4d7056b',
      '/workflows/a/b',
    ]) {
      const missing = await get(origin, path);
      expect(missing.response.status, path).toBe(404);
      expect(missing.text).not.toContain('"name": "causeway"');
    }
    // HEAD answers the headers without a body; other methods on `/` are not the dashboard's.
    const head = await fetch(`${origin}/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect((await fetch(`${origin}/`, { method: 'POST' })).status).toBe(404);
    // GraphQL still answers on its own path.
    expect(
      (await fetch(`${api.url}?query=${encodeURIComponent('{ definitions { name } }')}`)).status,
    ).toBe(200);
  });

  it('shows workflow data escaped: input, error and a reflected filter never become markup', async () => {
    const api = await startApi(database().url, { engine: { workflows: [fragile] } });
    const origin = new URL(api.url).origin;
    const worker = await api.engine.startWorker({ concurrency: { default: 1 } });
    const { workflow } = await api.engine.submit('fragile-note', { title: hostile });
    await waitFor(async () => (await api.engine.getWorkflow(workflow.id))?.state === 'dead', {
      description: 'the fragile workflow to end dead',
    });
    await worker.stop();

    const page = await get(origin, `/workflows/${workflow.id}`);
    expect(page.response.status).toBe(200);
    expect(page.response.headers.get('content-security-policy')).toBe(contentSecurityPolicy);
    expect(scriptTags(page.text)).toEqual(['<script type="module" src="/dashboard/dashboard.js">']);
    expect(page.text).not.toContain('<img');
    expect(page.text).not.toContain('onerror="');
    // In the input (JSON), in the step's last error and in the timeline's error summary.
    expect(page.text).toContain('&lt;script&gt;alert(\\&quot;x\\&quot;)&lt;/script&gt;');
    const inError =
      'cannot render &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&quot;alert(1)&quot;&gt;';
    expect(page.text.split(inError).length - 1).toBeGreaterThanOrEqual(2);
    expect(page.text).toContain('data-reason="non_retryable_error"');

    const list = await get(origin, `/?state=all&name=${encodeURIComponent(hostile)}`);
    expect(list.response.status).toBe(200);
    expect(scriptTags(list.text)).toEqual(['<script type="module" src="/dashboard/dashboard.js">']);
    expect(list.text).toContain(
      'value="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"',
    );
    const bad = await get(origin, `/?state=${encodeURIComponent(hostile)}`);
    expect(bad.response.status).toBe(400);
    expect(bad.text).toContain('BAD_USER_INPUT');
    expect(scriptTags(bad.text)).toHaveLength(1);
    expect(bad.text).not.toContain('<img');
  });

  it('lists workflows by state and name, and resumes the stream after the log position it rendered', async () => {
    const api = await startApi(database().url, { engine: { workflows: [fragile, tickWorkflow] } });
    const origin = new URL(api.url).origin;
    const { workflow: tick } = await api.engine.submit('tick-report', { report: 'r1' });
    const { workflow: note } = await api.engine.submit('fragile-note', { title: 'plain' });
    const ids = (text: string) =>
      [...text.matchAll(/<tr data-workflow-id="([^"]+)"/g)].map((m) => m[1]);

    // Newest first; the file's other workflows are finished, so `active` shows these two.
    const active = await get(origin, '/?state=active');
    expect(ids(active.text)).toEqual([note.id, tick.id]);
    // With no worker running, each row says what holds it.
    expect(active.text).toContain('0 of 1 done; only: no worker');
    expect(active.text).toContain('0 of 1 done; render: no worker');
    expect(ids((await get(origin, '/?name=tick-report')).text)).toEqual([tick.id]);
    expect(ids((await get(origin, '/?state=succeeded')).text)).toEqual([]);
    expect((await get(origin, '/?state=succeeded')).text).toContain('No workflow is in this state');
    // The page says up to which log id the feed had offered everything when it read the data
    // (the script's stream resumes after it): never past what the feed has offered since.
    const after = /data-after="(\d+)"/.exec(active.text)?.[1];
    expect(BigInt(after as string)).toBeLessThanOrEqual(api.server.feed.position);
    expect(active.text).toContain('data-live="workflows"');
  });

  it('renders schedules with their next tick and the pause and trigger buttons', async () => {
    const api = await startApi(database().url, {
      engine: { workflows: [tickWorkflow], schedules: [morningDigest] },
    });
    const origin = new URL(api.url).origin;
    await api.engine.schedules(); // writes the schedule row
    const page = await get(origin, '/schedules');
    expect(page.response.status).toBe(200);
    expect(page.text).toContain('<tr data-schedule="morning-digest">');
    expect(page.text).toContain('<code>0 7 * * *</code>');
    expect(page.text).toContain('data-dialog="pause-schedule"');
    expect(page.text).toContain('data-dialog="trigger-schedule"');
    expect(page.text).toContain('<dialog id="dialog-pause-schedule"');
  });

  it('lists the live workers with their queues and the workflows they define', async () => {
    const api = await startApi(database().url, { engine: { workflows: [fragile, tickWorkflow] } });
    const origin = new URL(api.url).origin;
    const none = await get(origin, '/workers');
    expect(none.response.status).toBe(200);
    expect(none.text).toContain('No live worker is registered');
    const worker = await api.engine.startWorker({ concurrency: { default: 2, 'q-schedules': 1 } });
    const page = await get(origin, '/workers');
    expect(page.text).toContain(`<tr data-holder="${api.engine.holder}" class="live">`);
    expect(page.text).toContain('<li>default: 2 slots</li>');
    expect(page.text).toContain('<li>q-schedules: 1 slot</li>');
    expect(page.text).toContain(
      `<li>fragile-note <code>${workflowVersion(fragile)}</code> <span class="steps">(render)</span></li>`,
    );
    // A clean shutdown leaves the registry: not even the stale list has it.
    await worker.stop();
    const withStale = await get(origin, '/workers?stale=1');
    expect(withStale.response.status).toBe(200);
    expect(withStale.text).toContain('No worker is registered');
    expect(withStale.text).not.toContain(api.engine.holder);
  });

  it('shows nothing of a server with private reads without a token', async () => {
    const api = await startApi(database().url, {
      engine: { workflows: [fragile] },
      api: { publicReads: false },
    });
    const origin = new URL(api.url).origin;
    const { workflow } = await api.engine.submit('fragile-note', { title: 'secret title' });
    const anonymous = await get(origin, `/workflows/${workflow.id}`);
    expect(anonymous.response.status).toBe(401);
    expect(anonymous.text).toContain('UNAUTHENTICATED');
    expect(anonymous.text).toContain('data-needs-token="true"');
    expect(anonymous.text).not.toContain('secret title');
    const list = await get(origin, '/');
    expect(list.response.status).toBe(401);
    expect(list.text).not.toContain(workflow.id);

    const authorized = await get(origin, `/workflows/${workflow.id}`, {
      headers: { authorization: `Bearer ${aliceToken}` },
    });
    expect(authorized.response.status).toBe(200);
    expect(authorized.text).toContain('secret title');
    const wrong = await get(origin, '/', { headers: { authorization: 'Bearer nope-nope-nope' } });
    expect(wrong.response.status).toBe(401);
  });
});
