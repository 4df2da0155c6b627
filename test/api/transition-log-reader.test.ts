import { createReadModel } from '@causeway/engine';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { publishNote } from '../../examples/publish-note/workflow';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { startApi, wsClient, wsSubscribe } from './helpers';

const database = useTestDatabase();

const clients: pg.Client[] = [];
afterEach(async () => {
  await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
  clients.length = 0;
});

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  clients.push(client);
  return client;
}

/** Appends one (test-only) log row in the client's open transaction; returns its id. */
async function appendRow(client: pg.Client, workflowId: string): Promise<string> {
  const { rows } = await client.query<{ id: string }>(
    `insert into causeway_transitions (workflow_id, to_state, reason, actor, attempt, at)
     values ($1, 'queued', 'submitted', 'client', 0, now()) returning id::text as id`,
    [workflowId],
  );
  return rows[0]?.id as string;
}

describe('TransitionLogReader: live transitions in commit order', () => {
  it('never releases a row while a transaction holding a smaller id is still open', async () => {
    const url = database().url;
    const engine = testEngine(url, { workflows: [publishNote] });
    await engine.migrate();
    const { workflow } = await engine.submit('publish-note', { noteId: 'order', version: 1 });
    const reader = createReadModel(engine.db).transitionLogReader();
    await reader.start();
    const start = reader.position;

    // A takes its xid first; B takes a younger xid but the smaller id; A commits first.
    const a = await connect(url);
    const b = await connect(url);
    await a.query('begin');
    await a.query('select pg_current_xact_id()');
    await b.query('begin');
    await b.query('select pg_current_xact_id()');
    const smaller = await appendRow(b, workflow.id);
    const larger = await appendRow(a, workflow.id);
    expect(BigInt(smaller)).toBeLessThan(BigInt(larger));
    await a.query('commit');

    // Filtering on the writer's own xid (the row's xmin < snapshot xmin) would already release the
    // larger id here — and a reader resuming after it would skip the smaller one forever.
    await waitFor(
      async () =>
        (
          await query<{ id: string }>(
            url,
            `select id::text as id from causeway_transitions
             where id > $1
               and xmin::text::bigint < pg_snapshot_xmin(pg_current_snapshot())::text::bigint % 4294967296`,
            [start.toString()],
          )
        ).some((row) => row.id === larger),
      { description: 'the xid filter to release the larger id while B is open' },
    );
    expect(await reader.read(100)).toEqual([]);
    expect(reader.waiting).toBe(true);
    expect(reader.position).toBe(start);

    await b.query('commit');
    const released: string[] = [];
    await waitFor(
      async () => {
        released.push(...(await reader.read(100)).map((row) => row.id));
        return released.length >= 2;
      },
      { description: 'both rows once B committed' },
    );
    expect(released).toEqual([smaller, larger]);
    expect(reader.position).toBe(BigInt(larger));
  });

  it('treats ids of rolled-back transactions as gaps, and pages by the limit', async () => {
    const url = database().url;
    const engine = testEngine(url, { workflows: [publishNote] });
    await engine.migrate();
    const reader = createReadModel(engine.db).transitionLogReader();
    await reader.start();
    const start = reader.position;
    const { workflow } = await engine.submit('publish-note', { noteId: 'gaps', version: 1 });
    const rolledBack = await connect(url);
    await rolledBack.query('begin');
    await appendRow(rolledBack, workflow.id);
    await rolledBack.query('rollback');
    await engine.submit('publish-note', { noteId: 'gaps', version: 2 });

    const released: string[] = [];
    await waitFor(
      async () => {
        released.push(...(await reader.read(3)).map((row) => row.id));
        return released.length >= 8 && !reader.waiting;
      },
      { description: 'both submits (4 rows each)' },
    );
    const log = await query<{ id: string }>(
      url,
      'select t.id::text as id from causeway_transitions t where t.id > $1 order by t.id',
      [start.toString()],
    );
    expect(log).toHaveLength(8);
    expect(released).toEqual(log.map((row) => row.id));
    expect(await reader.read(3)).toEqual([]);
  });
});

describe('the transitions subscription under concurrent writers', () => {
  it('delivers every committed row exactly once, in id order, while many transactions commit out of order', async () => {
    const url = database().url;
    const api = await startApi(url, { engine: { workflows: [publishNote], poolSize: 12 } });
    const [{ max }] = (await query<{ max: string }>(
      url,
      'select coalesce(max(id), 0)::text as max from causeway_transitions',
    )) as [{ max: string }];
    const stream = wsSubscribe<{ transitions: { id: string; workflowId: string } }>(
      wsClient(api.wsUrl),
      'subscription($after: ID) { transitions(after: $after) { id workflowId } }',
      { after: max },
    );
    // 60 submits and 30 cancels from 12 connections at once: ids commit out of order.
    const submitted = await Promise.all(
      Array.from({ length: 60 }, (_, n) =>
        api.engine.submit('publish-note', { noteId: `race-${n}`, version: 1 }),
      ),
    );
    await Promise.all(
      submitted
        .filter((_, n) => n % 2 === 0)
        .map((result) => api.engine.cancelWorkflow(result.workflow.id)),
    );
    const sentinel = await api.engine.submit('publish-note', { noteId: 'race-end', version: 1 });
    await waitFor(
      () => stream.items.some((item) => item.transitions.workflowId === sentinel.workflow.id),
      { timeoutMs: 15_000, description: 'the sentinel' },
    );
    stream.stop();
    const log = await query<{ id: string }>(
      url,
      'select t.id::text as id from causeway_transitions t where t.id > $1 order by t.id',
      [max],
    );
    const streamed = stream.items.map((item) => item.transitions.id);
    const upToSentinel = log.map((row) => row.id).slice(0, streamed.length);
    expect(streamed).toEqual(upToSentinel);
    expect(streamed.length).toBeGreaterThanOrEqual(60 * 4 + 30 * 4);
  });
});
