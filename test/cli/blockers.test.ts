/**
 * `causeway why` and `causeway workers` as child processes against a server in another
 * process: the blockers and the worker registry as the API answers them, in a table for
 * people and as JSON; a killed worker ages out of `workers` and stays in `--include-stale`.
 */
import type { BlockerView } from '@causeway/cli';
import type { WorkflowDefinition } from '@causeway/workflow';
import { workflowVersion } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { spawnFixture } from '../api/fixtures/processes';
import { data, operators } from '../api/helpers';
import { waitFor } from '../helpers/wait-for';
import { debounced, doomed, keyed, slow, staged, stranded } from './fixtures/workflows';
import { causeway, causewayJson, submitted, useCli, workflowReaches } from './helpers';

const { url, db, holder } = useCli();

type Blocker = BlockerView;

/** A workflow as the server's worker row lists it: its one version, the latest (R54). */
function served(definition: WorkflowDefinition, steps: string[]) {
  return { name: definition.name, version: workflowVersion(definition), latest: true, steps };
}

async function apiBlockers(id: string): Promise<Blocker[]> {
  const answer = await data<{ workflow: { blockers: Blocker[] } }>(
    url(),
    'query ($id: ID!) { workflow(id: $id) { blockers { taskId step code message until facts } } }',
    { variables: { id } },
  );
  return answer.workflow.blockers;
}

describe('causeway why', () => {
  it('shows a blocker per step that is not moving, as the API answers them', async () => {
    const waiting = await submitted(url(), 'cli-staged', { label: 'why-1' });
    const stranded = await submitted(url(), 'cli-stranded', { label: 'why-2' });
    await workflowReaches(db(), waiting, 'waiting');

    const json = await causewayJson<{ workflow: { blockers: Blocker[] } }>([
      'why',
      waiting,
      '--url',
      url(),
    ]);
    expect(json.code).toBe(0);
    const blockers = json.json.workflow.blockers;
    expect(json.json).toEqual({
      workflow: { id: waiting, name: 'cli-staged', state: 'WAITING', blockers: expect.any(Array) },
    });
    expect(blockers.map((blocker) => [blocker.step, blocker.code])).toEqual([
      ['approval', 'WAITING_FOR_EVENT'],
      ['finish', 'UPSTREAM_PENDING'],
    ]);
    expect(blockers[0]?.facts).toMatchObject({ name: 'cli.approved', key: 'why-1' });
    expect(blockers[0]?.until).toEqual(expect.any(String));
    // The messages name the times "since" relative to now, so the API is asked right after.
    expect(blockers.map((blocker) => blocker.taskId)).toEqual(
      (await apiBlockers(waiting)).map((blocker) => blocker.taskId),
    );

    const human = await causeway(['why', stranded, '--url', url()]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      new RegExp(`^workflow ${stranded} {2}cli-stranded {2}queued$`, 'm'),
    );
    expect(human.stdout).toMatch(/^STEP +BLOCKER +UNTIL +WHY$/m);
    const [orphan] = await apiBlockers(stranded);
    expect(orphan?.code).toBe('NO_WORKER');
    const row = human.stdout.split('\n').find((text) => text.startsWith('orphan '));
    expect(row?.split(/ {2,}/).slice(0, 3)).toEqual(['orphan', 'no_worker', '-']);
    expect(row).toContain('no live worker serves queue "nowhere"');
    expect(row).toContain(holder());
  });

  it('says nothing blocks a workflow that has ended', async () => {
    const id = await submitted(url(), 'doomed', { label: 'why-3' });
    await workflowReaches(db(), id, 'dead');
    const human = await causeway(['why', id, '--url', url()]);
    expect(human.code).toBe(0);
    expect(human.stdout).toBe(`workflow ${id}  doomed  dead\nnothing blocks it: it has ended\n`);
    const { json } = await causewayJson(['why', id, '--url', url()]);
    expect(json).toEqual({ workflow: { id, name: 'doomed', state: 'DEAD', blockers: [] } });
  });
});

describe('causeway workers', () => {
  it('lists the live workers; one killed ages out, and --include-stale still shows it', async () => {
    const spare = spawnFixture(new URL('./fixtures/server.ts', import.meta.url), {
      CAUSEWAY_CHILD_DATABASE_URL: db(),
      CAUSEWAY_OPERATORS: JSON.stringify(operators),
      CAUSEWAY_CHILD_QUEUES: 'spare',
      CAUSEWAY_CHILD_AGE_OUT_MS: '1000',
    });
    const { holder: spareHolder, pid: sparePid } = await spare.ready(60_000);
    const both = await causewayJson<{ workers: { holder: string; pid: number }[] }>([
      'workers',
      '--url',
      url(),
    ]);
    expect(both.code).toBe(0);
    expect(both.json.workers.map((worker) => worker.holder).sort()).toEqual(
      [holder(), spareHolder].sort(),
    );
    const main = both.json.workers.find((worker) => worker.holder === holder());
    expect(main).toEqual({
      holder: holder(),
      host: expect.any(String),
      pid: Number(holder().split('/')[1]),
      queues: [{ name: 'default', slots: 4 }],
      workflows: [
        served(staged, ['prepare', 'approval', 'finish']),
        served(doomed, ['charge']),
        served(slow, ['wait']),
        served(stranded, ['orphan']),
        served(debounced, ['publish']),
        served(keyed, ['call']),
      ],
      version: expect.any(String),
      startedAt: expect.any(String),
      heartbeatAt: expect.any(String),
      live: true,
    });

    spare.process.kill('SIGKILL'); // no clean shutdown: its row stays, and ages out
    await waitFor(
      async () => {
        const run = await causewayJson<{ workers: { holder: string }[] }>([
          'workers',
          '--url',
          url(),
        ]);
        return run.json.workers.every((worker) => worker.holder !== spareHolder);
      },
      { timeoutMs: 30_000, description: 'the killed worker aged out' },
    );
    const table = await causeway(['workers', '--url', url()]);
    expect(table.stdout).toMatch(
      /^HOLDER +HOST +PID +QUEUES +WORKFLOWS +WORKFLOW VERSIONS +VERSION +STARTED +HEARTBEAT +LIVE$/m,
    );
    const rows = table.stdout.trimEnd().split('\n').slice(1);
    expect(rows.map((text) => text.split(/ {2,}/)[0])).toEqual([holder()]);
    expect(rows[0]?.split(/ {2,}/).slice(2, 6)).toEqual([
      String(main?.pid),
      'default×4',
      'cli-staged,doomed,slow,cli-stranded,cli-debounced,cli-keyed',
      [staged, doomed, slow, stranded, debounced, keyed]
        .map((definition) => `${definition.name}@${workflowVersion(definition)}`)
        .join(','),
    ]);
    expect(rows[0]?.endsWith('  yes')).toBe(true);

    const stale = await causewayJson<{ workers: { holder: string; pid: number; live: boolean }[] }>(
      ['workers', '--include-stale', '--url', url()],
    );
    expect(stale.json.workers.find((worker) => worker.holder === spareHolder)).toMatchObject({
      pid: sparePid,
      live: false,
    });
  });
});
