/**
 * Causeway behind PgBouncer in transaction-pooling mode (Debian's, whatever its version,
 * started by the test on a free port in front of the test server): workers claim, settle and
 * submit through it, and the API reads through it; LISTEN, which needs a server connection of
 * its own, goes straight to the server (`directUrl`, the API's `databaseUrl`); named prepared
 * statements, which a pooler that does not track them breaks (1.18 never does; 1.21 and later
 * only with `max_prepared_statements` above 0), are off (`preparedStatements: false`).
 * Each part is shown failing the other way too: LISTEN through the pooler, statements named.
 */
import { createEngine } from '@causeway/engine';
import { describe, expect, inject, it } from 'vitest';
import {
  type PgBouncer,
  pgbouncerVersion,
  startPgBouncer,
  tracksPreparedStatements,
} from '../../scripts/pgbouncer';
import { data, sseSubscribe, startApi } from '../api/helpers';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { oneStep, pooledTransactions, threeSteps, usePgBouncer, workflowStates } from './pooler';

const database = useTestDatabase();
const pooler = usePgBouncer(2);
/** Long enough that a worker sees late work within a test only through a wake-up. */
const noPolling = 60_000;

const behindThePooler = (options: { directUrl: string }) =>
  testEngine(pooler().urlFor(database().url), {
    workflows: [oneStep, threeSteps],
    preparedStatements: false,
    poolSize: 6,
    pollIntervalMs: noPolling,
    ...options,
  });

describe('Causeway behind PgBouncer in transaction mode', () => {
  it('runs one-step and three-step workflows end to end through the pooler, woken over a direct LISTEN', async () => {
    const url = database().url;
    const engine = behindThePooler({ directUrl: url });
    await engine.migrate();
    const before = await pooledTransactions(pooler(), database().name);
    const worker = await engine.startWorker({ concurrency: 4 });
    await engine.submitMany([
      ...Array.from({ length: 40 }, (_, i) => ({ name: oneStep.name, input: { i } })),
      ...Array.from({ length: 10 }, (_, i) => ({ name: threeSteps.name, input: { i } })),
    ]);
    await waitFor(async () => (await workflowStates(url)).succeeded === 50, {
      timeoutMs: 15_000,
      description: '50 workflows succeeded',
    });

    // Late work reaches the idle worker through NOTIFY on the direct connection: it never polls.
    const late = await engine.submit(threeSteps.name, { i: 99 });
    await waitFor(async () => (await engine.getWorkflow(late.workflow.id))?.state === 'succeeded', {
      description: 'the late workflow, picked up on a wake-up',
    });
    await worker.stop();

    expect(await workflowStates(url)).toEqual({ succeeded: 51 });
    const tasks = await query<{ n: number }>(
      url,
      "select count(*)::int as n from causeway_tasks where state = 'succeeded'",
    );
    expect(tasks[0]?.n).toBe(40 + 11 * 3);
    expect(await logMismatches(url)).toEqual([]);
    // Submits, claims and settles went through the pooler (they batch: far fewer than edges).
    const relayed = (await pooledTransactions(pooler(), database().name)) - before;
    expect(relayed).toBeGreaterThanOrEqual(10);
  }, 40_000);

  it('a LISTEN through the pooler hears nothing: without directUrl late work waits for the poll', async () => {
    const url = database().url;
    const engine = behindThePooler({ directUrl: pooler().urlFor(url) });
    await engine.migrate();
    const first = await engine.submit(oneStep.name, { i: 0 });
    const worker = await engine.startWorker({ concurrency: 2 });
    // Its first claim took `first`; having claimed less than it asked for, the claim loop went
    // to sleep before the handler ran, and a finished step does not wake a drained loop.
    await waitFor(
      async () => (await engine.getWorkflow(first.workflow.id))?.state === 'succeeded',
      {
        description: 'the first workflow',
      },
    );
    const late = await engine.submit(oneStep.name, { i: 1 });
    // A wake-up would have it claimed in milliseconds (the test above); none comes.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await engine.getWorkflow(late.workflow.id))?.state).toBe('queued');
    await worker.stop();
  });

  it('named prepared statements break behind a PgBouncer that does not track them; unnamed ones work on every version', async () => {
    const url = database().url;
    const submitEight = async (preparedStatements: boolean, through: PgBouncer = pooler()) => {
      const engine = testEngine(through.urlFor(url), {
        workflows: [oneStep],
        directUrl: url,
        preparedStatements,
        poolSize: 8,
      });
      await engine.migrate();
      // Eight at once: eight client connections over PgBouncer's two server connections.
      return Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => engine.submit(oneStep.name, { i })),
      );
    };

    const named = await submitEight(true);
    const failures = named.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
    // A name prepared on one server connection is unknown on the next one the pooler picks,
    // and a second client preparing it on the same server connection finds it already there.
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) {
      expect(failure).toMatch(
        /prepared statement "cw_[0-9a-f]{20}" (already exists|does not exist)/,
      );
    }

    const unnamed = await submitEight(false);
    expect(unnamed.map((r) => r.status)).toEqual(Array(8).fill('fulfilled'));

    // From 1.21 a pooler can track them (`max_prepared_statements`; on by default from 1.24):
    // then named ones work too. 1.18 has no such setting: the pooler above is all it can be.
    const version = pgbouncerVersion();
    if (tracksPreparedStatements(version)) {
      const tracking = await startPgBouncer({
        serverUrl: inject('adminDatabaseUrl'),
        poolSize: 2,
        maxPreparedStatements: 200,
      });
      try {
        const tracked = await submitEight(true, tracking);
        expect(
          tracked.map((r) => r.status),
          `PgBouncer ${version.text}`,
        ).toEqual(Array(8).fill('fulfilled'));
      } finally {
        await tracking.stop();
      }
    }
  });

  it('the API answers queries through the pooler and streams transitions woken by a direct LISTEN', async () => {
    const url = database().url;
    const engine = behindThePooler({ directUrl: url });
    // Queries read through the engine's pool (the pooler); the feed LISTENs on `databaseUrl`.
    const api = await startApi(url, {
      engineInstance: engine,
      api: { workflows: [oneStep, threeSteps], feed: { pollIntervalMs: noPolling } },
    });
    const { workflow } = await engine.submit(threeSteps.name, { i: 1 });
    const stream = sseSubscribe<{ transitions: { reason: string; step: string | null } }>(
      api.url,
      'subscription($id: ID) { transitions(workflowId: $id, after: "0") { reason step } }',
      { variables: { id: workflow.id } },
    );
    await waitFor(() => stream.items.length === 4, { description: 'the submitted rows' });
    // Everything from here on reaches the stream only through a wake-up: the feed never polls.
    const worker = await engine.startWorker({ concurrency: 2 });
    await waitFor(
      () =>
        stream.items.some(
          (item) => item.transitions.reason === 'COMPLETED' && item.transitions.step === null,
        ),
      { description: "the workflow's completion on the stream" },
    );
    stream.stop();
    await worker.stop();
    const answer = await data<{ workflow: { state: string; transitions: unknown[] } }>(
      api.url,
      'query($id: ID!) { workflow(id: $id) { state transitions { id } } }',
      { variables: { id: workflow.id } },
    );
    expect(answer.workflow.state).toBe('SUCCEEDED');
    expect(stream.items).toHaveLength(answer.workflow.transitions.length);
    expect(stream.errors).toEqual([]);
  });

  it('refuses an empty directUrl with a stable code, before connecting anywhere', () => {
    const create = () =>
      createEngine({ databaseUrl: database().url, directUrl: '', workflows: [oneStep] });
    expect(create).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
});
