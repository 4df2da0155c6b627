/**
 * R55 on the dashboard, over HTTP: the workflows page filters by `attr=key=value` (repeatable,
 * all must match, typed as the CLI reads it), keeps the filter in its form and its next-page
 * link, shows each workflow's attributes, refuses a filter that is not key=value or gives a key
 * twice with 400; the workflow page lists the attributes, each a link to the list of its
 * workflows.
 */
import { defineWorkflow, step } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startApi } from '../api/helpers';
import { useTestDatabase } from '../helpers/database';

const database = useTestDatabase();

const labelled = defineWorkflow({
  name: 'dash-attr',
  input: z.object({ label: z.string() }),
  steps: { only: step({ queue: 'q-dash-attr', run: () => ({ done: true }) }) },
});

const ids = (text: string) =>
  [...text.matchAll(/<tr data-workflow-id="([^"]+)"/g)].map((match) => match[1]);

describe('the dashboard and attributes', () => {
  it('filters the list by every attribute given and shows them on both pages', async () => {
    const api = await startApi(database().url, { engine: { workflows: [labelled] } });
    const origin = new URL(api.url).origin;
    const submit = async (label: string, attributes: Record<string, string | number | boolean>) =>
      (await api.engine.submit('dash-attr', { label }, { attributes })).workflow.id;
    const numbered = await submit('a', { tenant: 'acme', tier: 5 });
    const texted = await submit('b', { tenant: 'acme', tier: '5' });
    const other = await submit('c', { tenant: 'globex', tier: 5 });
    const list = async (search: string) => {
      const response = await fetch(`${origin}/?${search}`);
      return { status: response.status, text: await response.text() };
    };
    const attr = (text: string) => `attr=${encodeURIComponent(text)}`;

    const acme = await list(attr('tenant=acme'));
    expect(acme.status).toBe(200);
    expect(ids(acme.text)).toEqual([texted, numbered]);
    expect(acme.text).toContain('Workflows with tenant=acme in any state, newest first');
    expect(acme.text).toContain('name="attr" type="text" value="tenant=acme"');
    expect(acme.text).toContain('<span class="attributes">tenant=acme tier=&quot;5&quot;</span>');
    expect(ids((await list(`${attr('tenant=acme')}&${attr('tier=5')}`)).text)).toEqual([numbered]);
    expect(ids((await list(attr('tier="5"'))).text)).toEqual([texted]);
    expect(ids((await list(attr('tier=5'))).text)).toEqual([other, numbered]);
    expect(ids((await list(`${attr('tier=5')}&state=dead`)).text)).toEqual([]);
    // An empty field (the form's spare one) filters nothing.
    expect(ids((await list(`${attr('tenant=globex')}&attr=`)).text)).toEqual([other]);

    const bad = await list(attr('tenant'));
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('is not key=value');
    const refused = await list(attr('9lives=1'));
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('must start with a letter');
    // Two values of one key: all must match, so refused as the CLI refuses it, none dropped.
    const twice = await list(`${attr('tenant=acme')}&${attr('tenant=globex')}`);
    expect(twice.status).toBe(400);
    expect(twice.text).toContain('the attribute filter gives tenant twice');

    const page = await (await fetch(`${origin}/workflows/${numbered}`)).text();
    expect(page).toContain('<dt>Attributes</dt>');
    expect(page).toContain(
      `<a class="attribute" href="/?${new URLSearchParams({ attr: 'tenant=acme' }).toString()}"><code>tenant=acme</code></a>`,
    );
    expect(page).toContain('<code>tier=5</code>');
  });

  it('keeps the attribute filter in the next-page link', async () => {
    const api = await startApi(database().url, { engine: { workflows: [labelled] } });
    const origin = new URL(api.url).origin;
    await api.engine.submitMany(
      Array.from({ length: 51 }, (_, n) => ({ name: 'dash-attr', input: { label: `p${n}` } })),
      { attributes: { batch: 'paged' } },
    );
    const first = await (await fetch(`${origin}/?attr=batch%3Dpaged`)).text();
    expect(ids(first)).toHaveLength(50);
    const next = /<a href="([^"]+)">Next page<\/a>/.exec(first)?.[1]?.replaceAll('&amp;', '&');
    expect(next).toContain('attr=batch%3Dpaged');
    const second = await (await fetch(`${origin}${next}`)).text();
    expect(ids(second)).toHaveLength(1);
  });
});
