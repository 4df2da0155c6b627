/**
 * GraphQL `definitions` (R54): every version of every workflow with its status, in-flight
 * count and live workers; a query of the step graph alone lists this process's versions;
 * `Workflow.version` and a worker's versions (live, stale, and a row from before versions);
 * `VersionStatus` mirrors the domain.
 */
import { buildApiSchema } from '@causeway/api';
import { workflow } from '@causeway/workflow';
import { versionStatuses } from '@causeway/workflow/internal';
import { GraphQLEnumType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { data, gql, startApi } from './helpers';

const database = useTestDatabase();
const url = () => database().url;

const input = z.object({ n: z.number() });
const v1 = workflow({ name: 'gql-versioned', input, version: 'v1' })
  .step('render', { queue: 'gql-v1', run: () => 'v1' })
  .build();
const v2 = workflow({ name: 'gql-versioned', input, version: 'v2' })
  .step('render', { queue: 'gql-v2', run: () => 'v2' })
  .step('announce', { after: ['render'], queue: 'gql-v2', run: () => 'said' })
  .build();
const other = workflow({ name: 'gql-other', input, version: 'only' })
  .step('render', { queue: 'gql-other', run: () => 'x' })
  .build();

interface Listed {
  definitions: {
    name: string;
    version: string | null;
    defined: boolean;
    latest: boolean;
    status: string;
    inFlight: number;
    workers: string[];
    steps: { name: string }[];
  }[];
}

const listing = `{ definitions {
  name version defined latest status inFlight workers steps { name }
} }`;

describe('definitions over GraphQL', () => {
  it('lists each version with its status, in-flight count and live workers', async () => {
    const api = await startApi(url(), { engine: { workflows: [v1, v2, other] } });
    // Another service, still on v1 only, with a worker; and one with a third version.
    const older = testEngine(url(), { workflows: [v1] });
    const olderWorker = await older.startWorker({ queues: ['gql-idle'], concurrency: 1 });
    const third = testEngine(url(), {
      workflows: [
        workflow({ name: 'gql-versioned', input, version: 'v0' })
          .step('render', { queue: 'gql-idle', run: () => 'v0' })
          .build(),
      ],
    });
    await third.submit('gql-versioned', { n: 0 });
    const newer = await api.engine.submit('gql-versioned', { n: 1 });
    await older.submit('gql-versioned', { n: 2 });
    await older.submit('gql-versioned', { n: 3 });

    const listed = await data<Listed>(api.url, listing);
    expect(listed.definitions).toEqual([
      {
        name: 'gql-other',
        version: 'only',
        defined: true,
        latest: true,
        status: 'SERVING',
        inFlight: 0,
        workers: [],
        steps: [{ name: 'render' }],
      },
      {
        name: 'gql-versioned',
        version: 'v1',
        defined: true,
        latest: false,
        // The older service's live worker lists v1 as its latest: new submits there take it.
        status: 'SERVING',
        inFlight: 2,
        workers: [older.holder],
        steps: [{ name: 'render' }],
      },
      {
        name: 'gql-versioned',
        version: 'v2',
        defined: true,
        latest: true,
        status: 'SERVING',
        inFlight: 1,
        workers: [],
        steps: [{ name: 'render' }, { name: 'announce' }],
      },
      {
        name: 'gql-versioned',
        version: 'v0',
        defined: false,
        latest: false,
        status: 'DRAINING',
        inFlight: 1,
        workers: [],
        steps: [],
      },
    ]);
    await olderWorker.stop();
    const afterStop = await data<Listed>(api.url, listing);
    expect(afterStop.definitions.find((each) => each.version === 'v1')).toMatchObject({
      status: 'DRAINING',
      inFlight: 2,
      workers: [],
    });

    // The workflow says its version; the API's worker row lists each version and its latest.
    const read = await data<{ workflow: { version: string } }>(
      api.url,
      `{ workflow(id: "${newer.workflow.id}") { version } }`,
    );
    expect(read.workflow.version).toBe('v2');
    await api.engine.startWorker({ queues: ['gql-v2'], concurrency: 1 });
    const workers = await waitFor(async () => {
      const found = await data<{
        workers: { workflows: { name: string; version: string; latest: boolean }[] }[];
      }>(api.url, '{ workers { workflows { name version latest } } }');
      return found.workers.length === 1 ? found.workers : undefined;
    });
    expect(workers[0]?.workflows).toEqual([
      { name: 'gql-versioned', version: 'v1', latest: false },
      { name: 'gql-versioned', version: 'v2', latest: true },
      { name: 'gql-other', version: 'only', latest: true },
    ]);
  });

  it("names each worker's versions, a stale one's too, and none in a row from before them", async () => {
    const api = await startApi(url(), { engine: { workflows: [v1, v2] } });
    const rows = `[
      {"name": "gql-versioned", "version": "v0", "latest": true, "steps": ["render"]},
      {"name": "gql-other", "steps": ["render"]}
    ]`;
    // An engine that stopped heartbeating an hour ago; one of its workflows is from before
    // versions (an older engine's row lists no version).
    await query(
      url(),
      `insert into causeway_workers (holder, host, pid, queues, workflows, sweeper,
         engine_version, app_version, started_at, heartbeat_at, stale_at)
       values ('gone-host/7/boot', 'gone-host', 7, '[]', $1::jsonb, false, '0.0.9', null,
               now() - interval '2 hours', now() - interval '1 hour', now() - interval '59 minutes')`,
      [rows],
    );
    await api.engine.startWorker({ queues: ['gql-v2'], concurrency: 1 });
    const fields = '{ holder live workflows { name version latest } }';
    type Rows = {
      workers: {
        holder: string;
        live: boolean;
        workflows: { name: string; version: string | null; latest: boolean }[];
      }[];
    };
    const live = await waitFor(async () => {
      const found = await data<Rows>(api.url, `{ workers ${fields} }`);
      return found.workers.length === 1 ? found.workers : undefined;
    });
    expect(live).toEqual([
      {
        holder: api.engine.holder,
        live: true,
        workflows: [
          { name: 'gql-versioned', version: 'v1', latest: false },
          { name: 'gql-versioned', version: 'v2', latest: true },
        ],
      },
    ]);
    const all = await data<Rows>(api.url, `{ workers(includeStale: true) ${fields} }`);
    expect(all.workers.find((row) => row.holder === 'gone-host/7/boot')).toEqual({
      holder: 'gone-host/7/boot',
      live: false,
      workflows: [
        { name: 'gql-versioned', version: 'v0', latest: true },
        { name: 'gql-other', version: null, latest: false },
      ],
    });
  });

  it('answers the step graph alone from the code, without the stored versions', async () => {
    const api = await startApi(url(), { engine: { workflows: [v1, v2] } });
    const third = testEngine(url(), {
      workflows: [
        workflow({ name: 'gql-versioned', input, version: 'v9' })
          .step('render', { queue: 'gql-idle', run: () => 'v9' })
          .build(),
      ],
    });
    await third.submit('gql-versioned', { n: 9 });
    const graph = await data<Listed>(
      api.url,
      '{ definitions { name version latest steps { name } } }',
    );
    expect(graph.definitions).toEqual([
      { name: 'gql-versioned', version: 'v1', latest: false, steps: [{ name: 'render' }] },
      {
        name: 'gql-versioned',
        version: 'v2',
        latest: true,
        steps: [{ name: 'render' }, { name: 'announce' }],
      },
    ]);
    // Asking for a stored field (here through a fragment) reads them.
    const stored = await gql<Listed>(
      api.url,
      '{ definitions { ...Fields } } fragment Fields on WorkflowDefinition { version inFlight }',
    );
    expect(stored.body.data?.definitions.map((each) => each.version)).toEqual(
      expect.arrayContaining(['v1', 'v2', 'v9']),
    );
  });

  it('has VersionStatus with exactly the domain values in UPPER_SNAKE', () => {
    const type = buildApiSchema().getType('VersionStatus');
    expect(type).toBeInstanceOf(GraphQLEnumType);
    expect((type as GraphQLEnumType).getValues().map((value) => value.name)).toEqual(
      versionStatuses.map((status) => status.toUpperCase()),
    );
  });
});
