import { EngineError } from '@causeway/engine';
import { defineWorkflow, maxJsonNesting, step, workflow } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { aliceToken, startApi } from '../api/helpers';
import { useTestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';

const database = useTestDatabase();

/** Accepts any JSON: only admission's storage checks stand between it and the database. */
const anything = defineWorkflow({
  name: 'deep-any',
  input: z.unknown(),
  steps: { only: step({ run: () => 1 }) },
});

/** Declares the event `deep.sent`, so a send of it is checked, not refused as unknown. */
const waiter = workflow({ name: 'deep-wait', input: z.object({}) })
  .event('go', { name: 'deep.sent', key: 'k', timeoutMs: 60_000 })
  .build();

const nestedArrays = (depth: number): unknown => {
  let value: unknown = 1;
  for (let level = 0; level < depth; level += 1) value = [value];
  return value;
};

async function refusal(call: () => Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await call();
  } catch (error) {
    if (error instanceof EngineError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('accepted');
}

// Found by the bad-input load (bad-input-load.ts): a deeply nested input or payload overflowed
// the call stack (admission's string walk, the API's request fingerprint) instead of getting
// its code.
describe('deeply nested JSON at admission', () => {
  it(`refuses nesting past ${maxJsonNesting} levels with a stable code, at any depth, writing nothing`, async () => {
    const url = database().url;
    const api = await startApi(url, { engine: { workflows: [anything, waiter] } });
    const { engine } = api;
    await engine.submit('deep-any', nestedArrays(maxJsonNesting));
    for (const depth of [maxJsonNesting + 1, 10_000, 200_000]) {
      expect(await refusal(() => engine.submit('deep-any', nestedArrays(depth)))).toEqual({
        code: 'unstorable_string',
        message: `input is nesting deeper than ${maxJsonNesting} levels, which Postgres cannot store`,
      });
      expect(
        await refusal(() => engine.sendEvent('deep.sent', 'k', nestedArrays(depth))),
      ).toMatchObject({
        code: 'unstorable_string',
      });
    }
    // Written by hand: JSON.stringify itself gives up on such a value.
    const deepText = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
    for (const id of ['null', '"deep-1"']) {
      const response = await fetch(api.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${aliceToken}` },
        body: `{"query": "mutation($input: JSON!, $id: String) { submitWorkflow(name: \\"deep-any\\", input: $input, clientMutationId: $id) { workflow { id } } }", "variables": {"input": ${deepText(20_000)}, "id": ${id}}}`,
      });
      const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
      expect(response.status).toBe(200);
      expect(body.errors?.map((error) => error.extensions?.code)).toEqual(['BAD_USER_INPUT']);
    }
    const [counts] = await query<{ workflows: number; events: number }>(
      url,
      'select (select count(*)::int from causeway_workflows) as workflows, (select count(*)::int from causeway_events) as events',
    );
    expect(counts).toEqual({ workflows: 1, events: 0 });
  });
});
