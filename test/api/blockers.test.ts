import { type CausewayDatabase, createReadModel } from '@causeway/engine';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { publishNote } from '../../examples/publish-note/workflow';
import { blockerWorkflows, openAllGates } from '../engine/fixtures/blocker-workflows';
import { useTestDatabase } from '../helpers/database';
import { setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { data, startApi } from './helpers';

/**
 * GraphQL over real HTTP (issue 18): `Workflow.blockers`, `Task.blocker` and `workers`, and the
 * blockers of a page of workflows read in a fixed number of statements.
 */
const database = useTestDatabase();
const url = () => database().url;
const workflows = [...blockerWorkflows, publishNote];

beforeAll(async () => {
  const setup = testEngine(url(), { workflows });
  await setup.migrate();
  await setup.close();
});
afterEach(openAllGates);

const pools: Kysely<CausewayDatabase>[] = [];
afterAll(async () => {
  await Promise.all(pools.map((db) => db.destroy()));
});

interface BlockerData {
  readonly taskId: string;
  readonly step: string;
  readonly code: string;
  readonly message: string;
  readonly until: string | null;
  readonly facts: Record<string, unknown>;
}

const blockerFields = 'taskId step code message until facts';

describe('blockers in GraphQL', () => {
  it('Workflow.blockers and Task.blocker say what blocks each task, and nothing for a finished one', async () => {
    const api = await startApi(url(), { engine: { workflows } });
    await api.engine.startWorker({ queues: ['blk-first', 'blk-shared'], concurrency: 1 });
    const chain = await api.engine.submit('blk-chain', { label: 'gql-chain' });
    const unserved = await api.engine.submit('blk-unserved', { label: 'gql-unserved' });
    const runAt = new Date(Date.now() + 3_600_000);
    const later = await api.engine.submit('blk-claimable', { label: 'gql-later' }, { runAt });
    const done = await api.engine.submit('blk-shared-known', { label: 'gql-done' });
    await waitFor(
      async () => (await api.engine.getWorkflow(done.workflow.id))?.state === 'succeeded',
      {
        description: 'the finished workflow',
      },
    );
    await waitFor(
      async () => (await api.engine.blockers(chain.workflow.id))?.[0]?.code === 'running',
      { description: 'the first step running' },
    );

    type Shape = {
      workflow: {
        blockers: BlockerData[];
        tasks: { id: string; step: string; blocker: BlockerData | null }[];
      };
    };
    const read = (id: string) =>
      data<Shape>(
        api.url,
        `query($id: ID!) { workflow(id: $id) { blockers { ${blockerFields} } tasks { id step blocker { ${blockerFields} } } } }`,
        { variables: { id } },
      );

    const { workflow } = await read(chain.workflow.id);
    expect(workflow.blockers.map((blocker) => [blocker.step, blocker.code])).toEqual([
      ['first', 'RUNNING'],
      ['second', 'UPSTREAM_PENDING'],
    ]);
    expect(workflow.blockers[0]?.facts).toMatchObject({ holder: api.engine.holder, attempt: 1 });
    expect(workflow.blockers[1]).toMatchObject({
      message: 'second: waiting for upstream step first (leased)',
      until: null,
      facts: { upstream: [{ step: 'first', state: 'leased' }] },
    });
    // Each task's blocker is its entry of the workflow's list (one read for both).
    for (const task of workflow.tasks) {
      expect(task.blocker).toEqual(workflow.blockers.find((blocker) => blocker.taskId === task.id));
    }

    const orphan = (await read(unserved.workflow.id)).workflow.blockers[0];
    const fromEngine = (await api.engine.blockers(unserved.workflow.id))?.[0];
    expect(orphan).toMatchObject({
      code: 'NO_WORKER',
      until: null,
      facts: { ...fromEngine?.facts },
    });
    expect(orphan?.message).toContain(`but no live worker serves queue "blk-nobody"`);

    const notDue = (await read(later.workflow.id)).workflow;
    expect(notDue.blockers).toEqual([
      expect.objectContaining({
        code: 'NOT_DUE',
        until: runAt.toISOString(),
        facts: expect.objectContaining({ cause: 'scheduled', runAt: runAt.toISOString() }),
      }),
    ]);

    const finished = (await read(done.workflow.id)).workflow;
    expect(finished.blockers).toEqual([]);
    expect(finished.tasks.map((task) => task.blocker)).toEqual([null]);
    // A task asked for by id has its blocker too.
    const taskId = workflow.tasks[1]?.id;
    const single = await data<{ task: { blocker: BlockerData } }>(
      api.url,
      `query($id: ID!) { task(id: $id) { blocker { ${blockerFields} } } }`,
      { variables: { id: taskId } },
    );
    expect(single.task.blocker).toEqual(workflow.blockers[1]);
  });

  it('reads the blockers of a page of workflows in the same statements for 5 or 20', async () => {
    const statements: string[] = [];
    const db = new Kysely<CausewayDatabase>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url(), max: 4 }) }),
      log(event) {
        const text = event.query.sql;
        if (text.includes('pg_sequence_last_value') || text.includes('id <= ')) return;
        statements.push(text);
      },
    });
    pools.push(db);
    const api = await startApi(url(), {
      engine: { workflows },
      api: { readModel: createReadModel(db) },
    });
    // A live worker for another queue, so the registry is read too.
    await api.engine.startWorker({ queues: ['blk-first'], concurrency: 1 });
    await api.engine.submitMany(
      Array.from({ length: 20 }, (_, n) => ({
        name: 'publish-note',
        input: { noteId: `page-${n}`, version: 1 },
      })),
    );
    type Page = {
      workflows: {
        edges: { node: { blockers: BlockerData[]; tasks: { blocker: BlockerData }[] } }[];
      };
    };
    const statementsFor = async (first: number) => {
      statements.length = 0;
      const page = await data<Page>(
        api.url,
        `{ workflows(first: ${first}, name: "publish-note") { edges { node {
          blockers { code facts } tasks { blocker { code } }
        } } } }`,
      );
      expect(page.workflows.edges).toHaveLength(first);
      for (const { node } of page.workflows.edges) {
        expect(node.blockers.map((blocker) => blocker.code)).toEqual([
          'NO_WORKER',
          'UPSTREAM_PENDING',
          'UPSTREAM_PENDING',
        ]);
        expect(node.tasks.map((task) => task.blocker.code).sort()).toEqual([
          'NO_WORKER',
          'UPSTREAM_PENDING',
          'UPSTREAM_PENDING',
        ]);
      }
      return [...statements];
    };
    const five = await statementsFor(5);
    const twenty = await statementsFor(20);
    expect(twenty.length).toBe(five.length);
    // The page and its tasks; then in one snapshot (begin, commit) the tasks with their latest
    // edges, the due queues' loads and the registry: nothing per workflow.
    expect(twenty).toHaveLength(7);
  });

  it('workers: the live registry over HTTP, and stale rows with includeStale', async () => {
    const api = await startApi(url(), {
      engine: { workflows, workerHeartbeatMs: 100, workerAgeOutMs: 1_000, appVersion: '7.1.0' },
    });
    await api.engine.startWorker({ queues: ['blk-first', 'blk-second'], concurrency: 2 });
    // A second engine that heartbeats rarely: moving the clock past its age-out makes it stale.
    const quiet = testEngine(url(), {
      workflows: [publishNote],
      workerHeartbeatMs: 600_000,
      workerAgeOutMs: 1_200_000,
    });
    await quiet.startWorker({ queues: ['cpu'], concurrency: 1, sweeper: false });
    const fields =
      'holder host pid queues { name slots } workflows { name steps } version engineVersion appVersion sweeper startedAt heartbeatAt staleAt live';
    type Row = {
      holder: string;
      pid: number;
      queues: { name: string; slots: number }[];
      workflows: { name: string; steps: string[] }[];
      version: string;
      engineVersion: string;
      appVersion: string | null;
      sweeper: boolean;
      startedAt: string;
      heartbeatAt: string;
      staleAt: string;
      live: boolean;
    };
    const live = await data<{ workers: Row[] }>(api.url, `{ workers { ${fields} } }`);
    const mine = live.workers.find((row) => row.holder === api.engine.holder);
    expect(live.workers.map((row) => row.holder).sort()).toEqual(
      [api.engine.holder, quiet.holder].sort(),
    );
    expect(mine).toMatchObject({
      pid: process.pid,
      queues: [
        { name: 'blk-first', slots: 2 },
        { name: 'blk-second', slots: 2 },
      ],
      appVersion: '7.1.0',
      version: `7.1.0 (causeway ${mine?.engineVersion})`,
      sweeper: true,
      live: true,
    });
    expect(mine?.workflows).toContainEqual({ name: 'blk-chain', steps: ['first', 'second'] });

    try {
      await setDatabaseClockOffset(url(), 1_800_000);
      const after = await waitFor(
        async () => {
          const answer = await data<{ workers: Row[] }>(api.url, `{ workers { holder live } }`);
          return answer.workers.length === 1 ? answer.workers : undefined;
        },
        { description: 'the quiet engine aging out while the other heartbeats' },
      );
      expect(after).toEqual([{ holder: api.engine.holder, live: true }]);
      const all = await data<{ workers: Row[] }>(
        api.url,
        `{ workers(includeStale: true) { ${fields} } }`,
      );
      // The most recent heartbeat first.
      expect(all.workers.map((row) => [row.holder, row.live])).toEqual([
        [api.engine.holder, true],
        [quiet.holder, false],
      ]);
      expect(all.workers[1]).toMatchObject({ sweeper: false, appVersion: null });
    } finally {
      await setDatabaseClockOffset(url(), 0);
    }
  });
});
