/**
 * The workers page's Versions section over plain HTTP (R54): each version of each workflow
 * with its status, in-flight count and live workers, escaped like the rest of the page.
 */
import { workflow } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startApi } from '../api/helpers';
import { useTestDatabase } from '../helpers/database';
import { testEngine } from '../helpers/engine';

const database = useTestDatabase();

const input = z.object({ n: z.number() });
const versionOf = (version: string, queue: string) =>
  workflow({ name: 'dash-versioned', input, version })
    .step('render', { queue, run: () => version })
    .build();

/** The section's row of a version: its cells' text, tags stripped. */
function rowOf(page: string, key: string): string[] | undefined {
  const row = page.match(new RegExp(`<tr data-version="${key}"[^>]*>([\\s\\S]*?)</tr>`));
  if (row?.[1] === undefined) return undefined;
  return [...row[1].matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((cell) =>
    (cell[1] ?? '')
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
  );
}

describe('the Versions section of the workers page', () => {
  it('shows each version with its status, in-flight count and live workers', async () => {
    const api = await startApi(database().url, {
      engine: { workflows: [versionOf('v1', 'dash-q'), versionOf('v2', 'dash-q')] },
    });
    await api.engine.startWorker({ queues: ['dash-other'], concurrency: 1 });
    // A version only stored work knows, with a name that would be markup if not escaped.
    const older = testEngine(database().url, { workflows: [versionOf('<v0>', 'dash-idle')] });
    await older.submit('dash-versioned', { n: 0 });
    await older.submit('dash-versioned', { n: 1 });

    const response = await fetch(`${new URL(api.url).origin}/workers`);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain(
      '<section data-region="versions" aria-label="Versions"><h2>Versions</h2>',
    );
    expect(rowOf(page, 'dash-versioned@v2')).toEqual([
      'dash-versioned',
      'v2 latest here',
      'serving',
      '0',
      api.engine.holder,
    ]);
    expect(rowOf(page, 'dash-versioned@v1')).toEqual([
      'dash-versioned',
      'v1',
      'drained: safe to delete',
      '0',
      api.engine.holder,
    ]);
    expect(rowOf(page, 'dash-versioned@&lt;v0&gt;')).toEqual([
      'dash-versioned',
      '&lt;v0&gt;',
      'draining',
      '2',
      'none live',
    ]);
    expect(page).not.toContain('<v0>');
  });
});
