/**
 * Retention over GraphQL: `purgeFinished` needs an operator token, takes the operator from it,
 * requires a reason, refuses a bad age with a stable code and nothing changed, counts in a dry
 * run, and removes and records in a real one; a repeat with the same clientMutationId gets the
 * first answer.
 */
import { describe, expect, it } from 'vitest';
import {
  dayMs,
  note,
  retentionWorkflows,
  storedCounts,
  submitOnDay,
  untilSucceeded,
} from '../engine/retention-support';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset } from '../helpers/engine';
import { aliceToken, gql, startApi } from './helpers';

const database = useTestDatabase();
const url = () => database().url;

const purge = `mutation Purge($age: Float!, $reason: String!, $dryRun: Boolean, $id: String) {
  purgeFinished(olderThanMs: $age, reason: $reason, dryRun: $dryRun, clientMutationId: $id) {
    clientMutationId dryRun cutoffAt workflowsRemoved tasksRemoved logRowsRemoved eventsRemoved
    deliveriesRemoved versionsRemoved
    partitionsDropped { name workflows tasks logRows }
    partitionsHeld { name liveWorkflows youngWorkflows liveWorkflowIds youngWorkflowIds busy message }
    defaultPartitionRows runId
  }
}`;

interface Payload {
  purgeFinished: {
    dryRun: boolean;
    workflowsRemoved: number;
    eventsRemoved: number | null;
    deliveriesRemoved: number | null;
    versionsRemoved: number | null;
    partitionsDropped: { name: string; workflows: number }[];
    partitionsHeld: { liveWorkflowIds: string[]; message: string }[];
    runId: string | null;
  };
}

describe('purgeFinished over GraphQL', () => {
  it('refuses without a token or with bad input, then purges as the token operator', async () => {
    const api = await startApi(url(), { engine: { workflows: retentionWorkflows } });
    const worker = await api.engine.startWorker({ queues: ['q-retention'], concurrency: 4 });
    const done = await submitOnDay(api.engine, 2, note.name, { n: 1 });
    await untilSucceeded(url(), [done]);
    await worker.stop();
    await setDatabaseClockOffset(url(), 40 * dayMs);
    const before = await storedCounts(url());

    const anonymous = await gql(api.url, purge, { variables: { age: 30 * dayMs, reason: 'x' } });
    expect(anonymous.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    for (const variables of [
      { age: -1, reason: 'retention' },
      { age: 1.5, reason: 'retention' },
      { age: 30 * dayMs, reason: '  ' },
    ]) {
      const refused = await gql(api.url, purge, { variables, token: aliceToken });
      expect(refused.body.errors?.[0]?.extensions, JSON.stringify(variables)).toMatchObject({
        code: 'BAD_USER_INPUT',
        reason: 'invalid_request',
      });
    }
    const missing = await gql(api.url, purge, {
      variables: { age: 30 * dayMs },
      token: aliceToken,
    });
    expect(missing.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await storedCounts(url())).toEqual(before);

    const dry = await gql<Payload>(api.url, purge, {
      variables: { age: 30 * dayMs, reason: 'see first', dryRun: true },
      token: aliceToken,
    });
    expect(dry.body.data?.purgeFinished).toMatchObject({
      dryRun: true,
      workflowsRemoved: 1,
      eventsRemoved: null,
      deliveriesRemoved: null,
      versionsRemoved: null,
      runId: null,
    });
    expect(await storedCounts(url())).toEqual(before);

    const variables = { age: 30 * dayMs, reason: 'keep 30 days', id: 'purge-1' };
    const real = await gql<Payload>(api.url, purge, { variables, token: aliceToken });
    expect(real.body.errors).toBeUndefined();
    expect(real.body.data?.purgeFinished).toMatchObject({
      workflowsRemoved: 1,
      eventsRemoved: 0,
      deliveriesRemoved: 0,
      // The worker stopped, and its one workflow is gone: both versions it served (R54).
      versionsRemoved: 2,
    });
    expect(await query(url(), 'select id from causeway_workflows where id = $1', [done])).toEqual(
      [],
    );
    const runs = await query<{ operator: string; reason: string }>(
      url(),
      'select operator, reason from causeway_retention_runs',
    );
    expect(runs).toEqual([{ operator: 'alice', reason: 'keep 30 days' }]);
    const repeat = await gql<Payload>(api.url, purge, { variables, token: aliceToken });
    expect(repeat.body.data).toEqual(real.body.data);
    expect(await query(url(), 'select id from causeway_retention_runs')).toHaveLength(1);
    await setDatabaseClockOffset(url(), 0);
  });
});
