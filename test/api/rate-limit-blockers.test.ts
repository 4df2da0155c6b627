import { defineWorkflow, rateLimit, StepError, step } from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { data, startApi } from './helpers';

/**
 * GraphQL over real HTTP (R51): a task held by a key that a throttled step paused has the
 * blocker RATE_LIMITED, naming the pausing task, its workflow and why, with the facts as JSON.
 */
const database = useTestDatabase();
const url = () => database().url;

const input = z.object({ account: z.string(), n: z.number().int() });
type Input = z.output<typeof input>;
const rateLimits = [rateLimit({ name: 'platform', limit: 5, periodMs: 60_000 })];
const throttled = defineWorkflow({
  name: 'gql-rate-429',
  input,
  steps: {
    post: step<Input>({
      queue: 'q-gql-rate-429',
      maxAttempts: 3,
      rateLimit: { name: 'platform', key: (ctx) => ctx.input.account },
      run: () => {
        throw new StepError('throttled', 'HTTP 429 from the platform', { retryAfterMs: 30_000 });
      },
    }),
  },
});
const workflows = [throttled];

beforeAll(async () => {
  const setup = testEngine(url(), { workflows, rateLimits });
  await setup.migrate();
  await setup.close();
});

describe('rate_limited in GraphQL (R51)', () => {
  it('Workflow.blockers says RATE_LIMITED with who paused the key, and why', async () => {
    const api = await startApi(url(), { engine: { workflows, rateLimits } });
    const pausing = await api.engine.submit('gql-rate-429', { account: 'acme', n: 0 });
    await api.engine.startWorker({ queues: ['q-gql-rate-429'], concurrency: 1 });
    const paused = await waitFor(
      async () =>
        (
          await query<{ until: Date; by: string }>(
            url(),
            `select paused_until as until, paused_by_task::text as by from causeway_rate_windows
             where name = 'platform' and key = 'acme' and paused_until is not null`,
          )
        )[0],
      { description: 'the key paused' },
    );
    const held = await api.engine.submit('gql-rate-429', { account: 'acme', n: 1 });
    const { workflow } = await data<{
      workflow: { blockers: { code: string; message: string; until: string; facts: unknown }[] };
    }>(api.url, 'query($id: ID!) { workflow(id: $id) { blockers { code message until facts } } }', {
      variables: { id: held.workflow.id },
    });
    expect(workflow.blockers).toEqual([
      {
        code: 'RATE_LIMITED',
        message: expect.stringMatching(
          new RegExp(
            `^post: due since \\d\\d:\\d\\d:\\d\\d, but rate limit platform for key "acme" is paused until ${paused.until.toISOString().slice(11, 19)} by task ${paused.by} of workflow ${pausing.workflow.id}: HTTP 429 from the platform$`,
          ),
        ),
        until: paused.until.toISOString(),
        facts: expect.objectContaining({
          name: 'platform',
          key: 'acme',
          pausedUntil: paused.until.toISOString(),
          pausedByTask: paused.by,
          pausedByWorkflow: pausing.workflow.id,
          pausedReason: 'HTTP 429 from the platform',
        }),
      },
    ]);
    // The pausing workflow's story says its throttled retry paused the key for every task.
    const told = await data<{ workflow: { explanation: string } }>(
      api.url,
      'query($id: ID!) { workflow(id: $id) { explanation } }',
      { variables: { id: pausing.workflow.id } },
    );
    expect(told.workflow.explanation).toContain(
      `rate limit platform for key "acme" paused for every task until ${paused.until.toISOString().slice(11, 19)}`,
    );
    // The held workflow's story names what holds it, as the engine's explain does.
    const heldStory = await data<{ workflow: { explanation: string } }>(
      api.url,
      'query($id: ID!) { workflow(id: $id) { explanation } }',
      { variables: { id: held.workflow.id } },
    );
    expect(heldStory.workflow.explanation).toContain(
      `is paused until ${paused.until.toISOString().slice(11, 19)} by task ${paused.by}`,
    );
    expect(heldStory.workflow.explanation).toBe((await api.engine.explain(held.workflow.id)).text);
  }, 30_000);
});
