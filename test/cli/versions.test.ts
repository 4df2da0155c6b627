/**
 * `causeway versions` (R54) as a child process against a server in another process: every
 * version with its status, in-flight count and live workers, as a table and as `--json`, and
 * `--name` keeping one workflow's versions.
 */
import type { VersionView } from '@causeway/cli';
import { workflow } from '@causeway/workflow';
import { workflowVersion } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { testEngine } from '../helpers/engine';
import { staged } from './fixtures/workflows';
import { causeway, causewayJson, useCli } from './helpers';

const { url, db, holder } = useCli();

/** An older version of the server's `cli-staged`, in a queue no worker serves. */
const olderStaged = workflow({
  name: 'cli-staged',
  input: z.object({ label: z.string() }),
  version: 'old',
})
  .step('only', { queue: 'cli-old', run: () => 'old' })
  .build();

interface Listed {
  definitions: VersionView[];
}

describe('causeway versions', () => {
  it('lists each version with its status, in-flight count and workers', async () => {
    const older = testEngine(db(), { workflows: [olderStaged] });
    await older.submitMany([
      { name: 'cli-staged', input: { label: 'a' } },
      { name: 'cli-staged', input: { label: 'b' } },
    ]);
    const listed = await causewayJson<Listed>(['versions', '--url', url(), '--name', 'cli-staged']);
    expect(listed.code).toBe(0);
    expect(listed.json.definitions).toEqual([
      {
        name: 'cli-staged',
        version: workflowVersion(staged),
        defined: true,
        latest: true,
        status: 'SERVING',
        inFlight: 0,
        workers: [holder()],
      },
      {
        name: 'cli-staged',
        version: 'old',
        defined: false,
        latest: false,
        status: 'DRAINING',
        inFlight: 2,
        workers: [],
      },
    ]);

    const every = await causewayJson<Listed>(['versions', '--url', url()]);
    expect(every.json.definitions.length).toBeGreaterThan(2);
    expect(new Set(every.json.definitions.map((each) => each.name))).toContain('cli-keyed');

    const text = await causeway(['versions', '--url', url(), '--name', 'cli-staged']);
    expect(text.code).toBe(0);
    const lines = text.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^WORKFLOW\s+VERSION\s+STATUS\s+IN FLIGHT\s+WORKERS\s+HERE\s*$/);
    expect(lines[1]).toMatch(
      new RegExp(
        `^cli-staged\\s+${workflowVersion(staged)}\\s+SERVING\\s+0\\s+${holder()}\\s+latest\\s*$`,
      ),
    );
    expect(lines[2]).toMatch(/^cli-staged\s+old\s+DRAINING\s+2\s+-\s+-\s*$/);

    const none = await causeway(['versions', '--url', url(), '--name', 'cli-nothing']);
    expect(none.stdout.trim()).toBe('no workflow version is defined, served or in flight');
  });
});
