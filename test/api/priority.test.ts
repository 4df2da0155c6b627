/**
 * Priority (R49) over GraphQL, on real HTTP: `submitWorkflow(priority:)` sets every task's
 * priority (it wins over the step's own), `Task.priority` reads it back, and a priority that
 * is out of range or not an integer is refused with its code and writes nothing.
 */
import { defineWorkflow, step } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';
import { aliceToken, data, gql, startApi } from './helpers';

const database = useTestDatabase();

const urgentByDefinition = defineWorkflow({
  name: 'api-priority',
  input: z.object({ label: z.string() }),
  steps: {
    first: step({ queue: 'q-api-priority', priority: 600, run: () => null }),
    second: step({ queue: 'q-api-priority', after: ['first'], run: () => null }),
  },
});

const submitDocument = `mutation($input: JSON!, $priority: Int) {
  submitWorkflow(name: "api-priority", input: $input, priority: $priority) {
    workflow { id tasks { step priority } }
  }
}`;

interface Submitted {
  submitWorkflow: { workflow: { id: string; tasks: { step: string; priority: number }[] } };
}

/** The rows the API could have written, as one comparable value. */
async function written(url: string): Promise<string> {
  const [row] = await query<{ print: string }>(
    url,
    `select concat_ws('|', (select count(*) from causeway_workflows),
       (select count(*) from causeway_tasks), (select count(*) from causeway_transitions)) as print`,
  );
  return row?.print as string;
}

describe('priority over GraphQL (R49)', () => {
  it("submitWorkflow's priority wins over each step's, and Task.priority reads what is stored", async () => {
    const url = database().url;
    const api = await startApi(url, { engine: { workflows: [urgentByDefinition] } });

    const given = await data<Submitted>(api.url, submitDocument, {
      variables: { input: { label: 'given' }, priority: -120 },
      token: aliceToken,
    });
    expect(given.submitWorkflow.workflow.tasks).toEqual([
      { step: 'first', priority: -120 },
      { step: 'second', priority: -120 },
    ]);

    const own = await data<Submitted>(api.url, submitDocument, {
      variables: { input: { label: 'own' } },
      token: aliceToken,
    });
    expect(own.submitWorkflow.workflow.tasks).toEqual([
      { step: 'first', priority: 600 },
      { step: 'second', priority: 0 },
    ]);

    // Read back through the task query too, and compared with the row itself.
    const taskId = (await api.engine.getWorkflow(given.submitWorkflow.workflow.id))?.tasks[0]?.id;
    const read = await data<{ task: { priority: number } }>(
      api.url,
      'query($id: ID!) { task(id: $id) { priority } }',
      { variables: { id: taskId } },
    );
    const [row] = await query<{ priority: number }>(
      url,
      'select priority from causeway_tasks where id = $1',
      [taskId],
    );
    expect(read.task.priority).toBe(-120);
    expect(row?.priority).toBe(-120);

    // The explanation names it (R49).
    const explained = await data<{ workflow: { explanation: string } }>(
      api.url,
      'query($id: ID!) { workflow(id: $id) { explanation } }',
      { variables: { id: given.submitWorkflow.workflow.id } },
    );
    expect(explained.workflow.explanation).toMatch(/^first: priority -120 s: /m);
  });

  it.each([
    {
      name: 'above 86,400',
      priority: 86_401,
      status: 200,
      code: 'BAD_USER_INPUT',
      reason: 'invalid_priority',
    },
    {
      name: 'below −86,400',
      priority: -86_401,
      status: 200,
      code: 'BAD_USER_INPUT',
      reason: 'invalid_priority',
    },
    // Not an integer: GraphQL's Int refuses it before anything runs (a request error, 400).
    { name: 'a fraction', priority: 1.5, status: 400, code: 'BAD_USER_INPUT', reason: undefined },
    { name: 'a string', priority: '60', status: 400, code: 'BAD_USER_INPUT', reason: undefined },
    {
      name: 'past 32 bits',
      priority: 2 ** 31,
      status: 400,
      code: 'BAD_USER_INPUT',
      reason: undefined,
    },
  ])('refuses a priority $name with $code and writes nothing', async (item) => {
    const url = database().url;
    const api = await startApi(url, { engine: { workflows: [urgentByDefinition] } });
    const before = await written(url);
    const response = await gql(api.url, submitDocument, {
      variables: { input: { label: 'bad' }, priority: item.priority },
      token: aliceToken,
    });
    expect(response.status).toBe(item.status);
    const errors = response.body.errors ?? [];
    expect(errors.map((error) => error.extensions?.code)).toEqual([item.code]);
    expect(errors[0]?.extensions?.reason).toBe(item.reason);
    expect(errors[0]?.message).toMatch(/priority|Int/);
    expect(response.body.data ?? null).toBeNull();
    expect(await written(url)).toBe(before);
  });

  it('refuses a literal fraction at validation, before anything runs', async () => {
    const url = database().url;
    const api = await startApi(url, { engine: { workflows: [urgentByDefinition] } });
    const before = await written(url);
    const response = await gql(
      api.url,
      'mutation { submitWorkflow(name: "api-priority", input: { label: "x" }, priority: 2.5) { deduplicated } }',
      { token: aliceToken },
    );
    expect(response.status).toBe(400);
    expect(response.body.errors?.map((error) => error.extensions?.code)).toEqual([
      'GRAPHQL_VALIDATION_FAILED',
    ]);
    expect(await written(url)).toBe(before);
  });
});
