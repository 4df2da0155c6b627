/**
 * `causeway versions` (R54) as a child process against a server in another process: every
 * version with its status, in-flight count and live workers, as a table and as `--json`, and
 * `--name` keeping one workflow's versions. `causeway workers` names the versions each worker
 * serves, the ones it runs only for recorded workflows marked `(older)`.
 */
import type { VersionView } from '@causeway/cli';
import { workflow } from '@causeway/workflow';
import { workflowVersion } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { query, testEngine } from '../helpers/engine';
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

/** Two versions of one workflow on one engine: v2 takes new submits, v1 runs what it recorded. */
const input = z.object({ n: z.number() });
const servedV1 = workflow({ name: 'cli-served', input, version: 'v1' })
  .step('render', { queue: 'cli-served', run: () => 'v1' })
  .build();
const servedV2 = workflow({ name: 'cli-served', input, version: 'v2' })
  .step('render', { queue: 'cli-served', run: () => 'v2' })
  .build();

interface WorkerRow {
  holder: string;
  workflows: { name: string; version: string | null; latest: boolean; steps: string[] }[];
}

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

describe('causeway workers', () => {
  it('names the workflow versions each worker serves, as a column and in the JSON', async () => {
    const deployed = testEngine(db(), { workflows: [servedV1, servedV2] });
    const worker = await deployed.startWorker({ queues: ['cli-served'], concurrency: 1 });
    // A row as an engine from before versions wrote it: its workflows name no version.
    await query(
      db(),
      `insert into causeway_workers (holder, host, pid, queues, workflows, sweeper,
         engine_version, app_version, started_at, heartbeat_at, stale_at)
       values ('old-host/1/boot', 'old-host', 1, '[]', $1::jsonb, false, '0.0.9', null,
               now(), now(), now() + interval '1 hour')`,
      [JSON.stringify([{ name: 'cli-served', steps: ['render'] }])],
    );
    try {
      const listed = await causewayJson<{ workers: WorkerRow[] }>(['workers', '--url', url()]);
      expect(listed.code).toBe(0);
      const rows = new Map(listed.json.workers.map((row) => [row.holder, row.workflows]));
      expect(rows.get(deployed.holder)).toEqual([
        { name: 'cli-served', version: 'v1', latest: false, steps: ['render'] },
        { name: 'cli-served', version: 'v2', latest: true, steps: ['render'] },
      ]);
      expect(rows.get('old-host/1/boot')).toEqual([
        { name: 'cli-served', version: null, latest: false, steps: ['render'] },
      ]);
      expect(rows.get(holder())?.find((each) => each.name === 'cli-staged')).toEqual({
        name: 'cli-staged',
        version: workflowVersion(staged),
        latest: true,
        steps: ['prepare', 'approval', 'finish'],
      });

      const text = await causeway(['workers', '--url', url()]);
      expect(text.code).toBe(0);
      const lines = text.stdout.trimEnd().split('\n');
      const header = lines[0]?.split(/ {2,}/) ?? [];
      const column = (holderId: string, name: string) =>
        lines.find((line) => line.startsWith(`${holderId} `))?.split(/ {2,}/)[header.indexOf(name)];
      expect(header.slice(4, 7)).toEqual(['WORKFLOWS', 'WORKFLOW VERSIONS', 'VERSION']);
      expect(column(deployed.holder, 'WORKFLOWS')).toBe('cli-served');
      expect(column(deployed.holder, 'WORKFLOW VERSIONS')).toBe(
        'cli-served@v1 (older),cli-served@v2',
      );
      expect(column('old-host/1/boot', 'WORKFLOW VERSIONS')).toBe('cli-served@(before versions)');
      expect(column(holder(), 'WORKFLOW VERSIONS')).toContain(
        `cli-staged@${workflowVersion(staged)},`,
      );
    } finally {
      await query(db(), `delete from causeway_workers where holder = 'old-host/1/boot'`);
      await worker.stop();
    }
  });
});
