/**
 * R50 over HTTP: the `concurrencyGroups` query shows each declared group with its steps and
 * limit, and each busy key with its held slots, ready tasks and holders; a task shows its
 * `concurrency`; bad input is refused with a stable code. `/metrics` shows the slots held and
 * the limit per group, never per key.
 */
import { defineWorkflow, step } from '@causeway/workflow';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { data, gql, startApi } from './helpers';
import { parsePrometheusText, samplesOf } from './prometheus-text';

const database = useTestDatabase();
const url = () => database().url;

let release: () => void = () => {};
let gate = new Promise<void>((resolve) => {
  release = resolve;
});
afterEach(() => {
  release();
  gate = new Promise<void>((resolve) => {
    release = resolve;
  });
});

const tenant = z.object({ tenant: z.string() });
const keyed = defineWorkflow({
  name: 'gql-keyed',
  input: tenant,
  steps: {
    call: step<z.output<typeof tenant>>({
      concurrency: { key: (ctx) => ctx.input.tenant, limit: 1, group: 'partner-api' },
      run: () => gate.then(() => 'done'),
    }),
  },
});
const plain = defineWorkflow({
  name: 'gql-unkeyed',
  input: z.object({}),
  steps: { only: step({ run: () => 'done' }) },
});

const listing = `query {
  concurrencyGroups {
    name limit defined steps keysBusy held queued
    keys { key limit held queued holders { taskId workflowId step state leaseHolder since } }
  }
}`;

interface Listed {
  concurrencyGroups: {
    name: string;
    keysBusy: number;
    held: number;
    queued: number;
    keys: {
      key: string;
      held: number;
      queued: number;
      holders: { taskId: string; workflowId: string; state: string; leaseHolder: string }[];
    }[];
  }[];
}

const heldRows = async () =>
  (
    await query<{ n: number }>(
      url(),
      `select count(*)::int as n from causeway_tasks where state = 'leased'`,
    )
  )[0]?.n;

describe('concurrency keys over GraphQL and /metrics', () => {
  it('lists groups with their busy keys and holders, and each task its key', async () => {
    const engine = testEngine(url(), { workflows: [keyed, plain], pollIntervalMs: 20 });
    const api = await startApi(url(), { engineInstance: engine });
    const ids: string[] = [];
    for (const name of ['acme', 'acme', 'acme', 'bolt']) {
      ids.push((await engine.submit(keyed.name, { tenant: name })).workflow.id);
    }
    await engine.startWorker({ concurrency: 4 });
    await waitFor(async () => (await heldRows()) === 2, { description: 'one holder per key' });
    const listed = (await data<Listed>(api.url, listing)).concurrencyGroups;
    expect(listed).toHaveLength(1);
    const [group] = listed;
    expect(group).toMatchObject({
      name: 'partner-api',
      limit: 1,
      defined: true,
      steps: ['gql-keyed/call'],
      keysBusy: 2,
      held: 2,
      queued: 2,
    });
    expect(group?.keys.map(({ key, held, queued }) => ({ key, held, queued }))).toEqual([
      { key: 'acme', held: 1, queued: 2 },
      { key: 'bolt', held: 1, queued: 0 },
    ]);
    const holders = group?.keys.flatMap((key) => key.holders) ?? [];
    expect(holders.every((h) => h.state === 'LEASED' && h.leaseHolder === engine.holder)).toBe(
      true,
    );
    expect(holders.map((h) => h.workflowId)).toContain(ids[3]);

    const plainId = (await engine.submit(plain.name, {})).workflow.id;
    const tasks = await data<{
      a: { tasks: { concurrency: unknown }[] };
      b: { tasks: { concurrency: unknown }[] };
    }>(
      api.url,
      `query($a: ID!, $b: ID!) {
        a: workflow(id: $a) { tasks { concurrency { group key limit } } }
        b: workflow(id: $b) { tasks { concurrency { group key limit } } }
      }`,
      { variables: { a: ids[3], b: plainId } },
    );
    expect(tasks.a.tasks).toEqual([
      { concurrency: { group: 'partner-api', key: 'bolt', limit: 1 } },
    ]);
    expect(tasks.b.tasks).toEqual([{ concurrency: null }]);

    const text = await (await fetch(api.url.replace(/\/graphql$/, '/metrics'))).text();
    const parsed = parsePrometheusText(text);
    const gauge = (name: string) =>
      samplesOf(parsed, name).map((sample) => ({ labels: sample.labels, value: sample.value }));
    expect(gauge('causeway_concurrency_slots_held')).toEqual([
      { labels: { group: 'partner-api' }, value: 2 },
    ]);
    expect(gauge('causeway_concurrency_limit')).toEqual([
      { labels: { group: 'partner-api' }, value: 1 },
    ]);
    release();
    await waitFor(async () => (await heldRows()) === 0, { description: 'every call done' });
    // A queued task of a freed key may still take and hold its slot for a moment.
    await waitFor(
      async () => {
        const after = parsePrometheusText(
          await (await fetch(api.url.replace(/\/graphql$/, '/metrics'))).text(),
        );
        const held = samplesOf(after, 'causeway_concurrency_slots_held').map((s) => s.value);
        return held.length === 1 && held[0] === 0;
      },
      { description: 'the held slots gauge back at 0' },
    );
  });

  it.each([0, 501])('refuses keys: %s with BAD_USER_INPUT', async (keys) => {
    const api = await startApi(url(), { engine: { workflows: [keyed] } });
    const refused = await gql(api.url, `query { concurrencyGroups(keys: ${keys}) { name } }`);
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
