/**
 * Queues over GraphQL (R53): `queues` shows each queue with its pause (who, why, since when)
 * and history; pauseQueue and resumeQueue need an operator token, take the operator from it,
 * keep the reason, answer `changed` (false for a repeat), refuse bad input with a stable
 * code and write nothing; a task of a paused queue shows the `QUEUE_PAUSED` blocker.
 */
import { defineWorkflow, step } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';
import { aliceToken, bobToken, data, gql, startApi } from './helpers';

const database = useTestDatabase();
const url = () => database().url;

const heldWork = defineWorkflow({
  name: 'gql-held',
  input: z.object({}),
  steps: { only: step({ queue: 'held', run: () => 'done' }) },
});

const listing = `query {
  queues { name paused { operator reason pausedAt } history { kind operator reason at } }
}`;

const pause = (name: string, reason: string) => `mutation {
  pauseQueue(name: ${JSON.stringify(name)}, reason: ${JSON.stringify(reason)}) {
    changed queue { name paused { operator reason pausedAt } }
  }
}`;

const resume = `mutation {
  resumeQueue(name: "held", clientMutationId: "r-1") {
    clientMutationId changed queue { name paused { operator } history { kind operator } }
  }
}`;

interface Listed {
  queues: {
    name: string;
    paused: { operator: string; reason: string; pausedAt: string } | null;
    history: { kind: string; operator: string; reason: string | null }[];
  }[];
}

const pauseRows = async () =>
  (
    await query<{ n: number }>(
      url(),
      `select (select count(*) from causeway_queue_pauses)
         + (select count(*) from causeway_queue_pause_events) as n`,
    )
  )[0]?.n;

describe('queues over GraphQL', () => {
  it('lists queues, pauses and resumes them as the token operator, with the blocker', async () => {
    const api = await startApi(url(), { engine: { workflows: [heldWork] } });
    expect((await data<Listed>(api.url, listing)).queues).toEqual([
      { name: 'held', paused: null, history: [] },
    ]);
    const paused = await data<{ pauseQueue: { changed: boolean; queue: Listed['queues'][0] } }>(
      api.url,
      pause('held', 'partner outage'),
      { token: aliceToken },
    );
    expect(paused.pauseQueue).toMatchObject({
      changed: true,
      queue: { name: 'held', paused: { operator: 'alice', reason: 'partner outage' } },
    });
    const again = await data<{ pauseQueue: { changed: boolean; queue: Listed['queues'][0] } }>(
      api.url,
      pause('held', 'another'),
      { token: bobToken },
    );
    expect(again.pauseQueue).toEqual({ changed: false, queue: paused.pauseQueue.queue });

    const submitted = await data<{ submitWorkflow: { workflow: { id: string } } }>(
      api.url,
      'mutation { submitWorkflow(name: "gql-held", input: {}) { workflow { id } } }',
      { token: aliceToken },
    );
    const blockers = await data<{
      workflow: {
        blockers: { code: string; facts: Record<string, unknown> }[];
        explanation: string;
      };
    }>(
      api.url,
      `query { workflow(id: "${submitted.submitWorkflow.workflow.id}") { blockers { code facts } explanation } }`,
    );
    expect(blockers.workflow.blockers).toMatchObject([
      { code: 'QUEUE_PAUSED', facts: { operator: 'alice', reason: 'partner outage' } },
    ]);
    // The explanation is the engine's, notes included.
    expect(blockers.workflow.explanation).toContain(
      'queue "held" paused by alice ("partner outage")',
    );

    const resumed = await data<{ resumeQueue: Record<string, unknown> }>(api.url, resume, {
      token: bobToken,
    });
    expect(resumed.resumeQueue).toEqual({
      clientMutationId: 'r-1',
      changed: true,
      queue: {
        name: 'held',
        paused: null,
        history: [
          { kind: 'PAUSED', operator: 'alice' },
          { kind: 'RESUMED', operator: 'bob' },
        ],
      },
    });
  });

  it('needs a token, refuses bad input with BAD_USER_INPUT and writes nothing', async () => {
    const api = await startApi(url(), { engine: { workflows: [heldWork] } });
    const before = await pauseRows();
    const anonymous = await gql(api.url, pause('held', 'no token'));
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.errors?.map((error) => error.extensions?.code)).toEqual([
      'UNAUTHENTICATED',
    ]);
    for (const [name, reason] of [
      ['', 'empty name'],
      ['q'.repeat(201), 'long name'],
      ['held', '  '],
      ['held', 'r'.repeat(1_001)],
    ] as const) {
      const refused = await gql(api.url, pause(name, reason), { token: aliceToken });
      expect(refused.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    expect(await pauseRows()).toBe(before);
  });
});
