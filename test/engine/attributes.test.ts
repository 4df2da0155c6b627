/**
 * R55 attributes at admission and in the engine's list: a submit's and a definition's
 * attributes are stored merged, on the workflow and as one indexed row each; a bad key or
 * value, a definition function that throws or returns a bad value, and two sources that
 * disagree are refused with their codes and write nothing; the list finds workflows by every
 * attribute given, types included, a page at a time. Real engine, real PostgreSQL.
 */
import { createReadModel, EngineError, type WorkflowKey } from '@causeway/engine';
import { defineWorkflow, step } from '@causeway/workflow/internal';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { attributeTerms } from './attribute-support';

const database = useTestDatabase();
const url = () => database().url;

const invoice = defineWorkflow({
  name: 'attr-invoice',
  input: z.object({ tenant: z.string(), amount: z.number() }),
  attributes: (input) => {
    if (input.tenant === 'boom') throw new Error('no attributes for boom');
    if (input.tenant === 'nested') return { tenant: { name: 'x' } } as never;
    return { tenant: input.tenant };
  },
  steps: { charge: step({ queue: 'q-attr', run: () => ({ charged: true }) }) },
});
const plain = defineWorkflow({
  name: 'attr-plain',
  input: z.object({ n: z.number() }),
  steps: { only: step({ queue: 'q-attr', run: () => ({ done: true }) }) },
});

const engine = () => testEngine(url(), { workflows: [invoice, plain] });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

/** Rows of every table a submit writes: a refusal must leave each count as it was. */
async function written(): Promise<Record<string, number>> {
  const [row] = await query<Record<string, number>>(
    url(),
    `select (select count(*)::int from causeway_workflows) as workflows,
            (select count(*)::int from causeway_tasks) as tasks,
            (select count(*)::int from causeway_transitions) as transitions,
            (select count(*)::int from causeway_workflow_attributes) as attributes`,
  );
  return row as Record<string, number>;
}

const termsOf = (workflowId: string) => attributeTerms(url(), workflowId);

describe('attributes at admission', () => {
  it("stores the submit's and the definition's attributes merged, one term per attribute", async () => {
    const app = engine();
    const { workflow } = await app.submit(
      'attr-invoice',
      { tenant: 'acme', amount: 5 },
      { attributes: { region: 'eu-west', tier: 5, urgent: true, code: '5' } },
    );
    const stored = await app.getWorkflow(workflow.id);
    expect(stored?.attributes).toEqual({
      code: '5',
      region: 'eu-west',
      tenant: 'acme',
      tier: 5,
      urgent: true,
    });
    expect(await termsOf(workflow.id)).toEqual([
      'code="5"',
      'region="eu-west"',
      'tenant="acme"',
      'tier=5',
      'urgent=true',
    ]);
    const [row] = await query<{ created: boolean }>(
      url(),
      `select bool_and(a.created_at = w.created_at) as created
         from causeway_workflow_attributes a join causeway_workflows w on w.id = a.workflow_id
        where w.id = $1`,
      [workflow.id],
    );
    expect(row?.created).toBe(true);
  });

  it('a workflow without attributes stores none: a null column and no rows', async () => {
    const app = engine();
    const { workflow } = await app.submit('attr-plain', { n: 1 });
    expect((await app.getWorkflow(workflow.id))?.attributes).toEqual({});
    const [row] = await query<{ attributes: unknown }>(
      url(),
      'select attributes from causeway_workflows where id = $1',
      [workflow.id],
    );
    expect(row?.attributes).toBeNull();
    expect(await termsOf(workflow.id)).toEqual([]);
  });

  const refusals: readonly {
    readonly label: string;
    readonly name?: string;
    readonly input?: unknown;
    readonly attributes: unknown;
    readonly code: string;
  }[] = [
    {
      label: 'a key that starts with a digit',
      attributes: { '1tenant': 'x' },
      code: 'invalid_attributes',
    },
    { label: 'a key with "="', attributes: { 'a=b': 'x' }, code: 'invalid_attributes' },
    { label: 'an empty key', attributes: { '': 'x' }, code: 'invalid_attributes' },
    {
      label: 'a key of 65 characters',
      attributes: { [`k${'x'.repeat(64)}`]: 1 },
      code: 'invalid_attributes',
    },
    {
      label: 'a string of 257 characters',
      attributes: { note: 'y'.repeat(257) },
      code: 'invalid_attributes',
    },
    { label: 'a NUL in a string', attributes: { note: 'a\u0000b' }, code: 'invalid_attributes' },
    {
      label: 'an infinite number',
      attributes: { n: Number.POSITIVE_INFINITY },
      code: 'invalid_attributes',
    },
    { label: 'NaN', attributes: { n: Number.NaN }, code: 'invalid_attributes' },
    { label: 'null', attributes: { n: null }, code: 'invalid_attributes' },
    { label: 'an object value', attributes: { n: { deep: 1 } }, code: 'invalid_attributes' },
    { label: 'an array value', attributes: { n: [1] }, code: 'invalid_attributes' },
    { label: 'an array of attributes', attributes: ['tenant'], code: 'invalid_attributes' },
    {
      label: '17 keys',
      attributes: Object.fromEntries(Array.from({ length: 17 }, (_, n) => [`k${n}`, n])),
      code: 'invalid_attributes',
    },
    {
      label: "16 keys of the submit's with the definition's tenant",
      name: 'attr-invoice',
      input: { tenant: 'acme', amount: 1 },
      attributes: Object.fromEntries(Array.from({ length: 16 }, (_, n) => [`k${n}`, n])),
      code: 'conflicting_attributes',
    },
    {
      label: "a tenant of the submit's that differs from the definition's",
      name: 'attr-invoice',
      input: { tenant: 'acme', amount: 1 },
      attributes: { tenant: 'globex' },
      code: 'conflicting_attributes',
    },
    {
      label: 'the number 5 where the definition\'s tenant is the string "5"',
      name: 'attr-invoice',
      input: { tenant: '5', amount: 1 },
      attributes: { tenant: 5 },
      code: 'conflicting_attributes',
    },
    {
      label: 'a definition function that throws',
      name: 'attr-invoice',
      input: { tenant: 'boom', amount: 1 },
      attributes: undefined,
      code: 'invalid_definition_attributes',
    },
    {
      label: 'a definition function that returns an object value',
      name: 'attr-invoice',
      input: { tenant: 'nested', amount: 1 },
      attributes: undefined,
      code: 'invalid_definition_attributes',
    },
  ];
  for (const refusal of refusals) {
    it(`refuses ${refusal.label} with ${refusal.code} and writes nothing`, async () => {
      const app = engine();
      const before = await written();
      const error = await app
        .submit(refusal.name ?? 'attr-plain', refusal.input ?? { n: 1 }, {
          ...(refusal.attributes === undefined
            ? {}
            : { attributes: refusal.attributes as Record<string, string> }),
        })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(EngineError);
      expect((error as EngineError).code).toBe(refusal.code);
      expect(await written()).toEqual(before);
    });
  }

  it('a key given twice with one value is one attribute; a batch refuses as a whole', async () => {
    const app = engine();
    const { workflow } = await app.submit(
      'attr-invoice',
      { tenant: 'same', amount: 1 },
      { attributes: { tenant: 'same' } },
    );
    expect((await app.getWorkflow(workflow.id))?.attributes).toEqual({ tenant: 'same' });
    const before = await written();
    const error = await app
      .submitMany(
        [
          { name: 'attr-invoice', input: { tenant: 'fine', amount: 1 } },
          { name: 'attr-invoice', input: { tenant: 'boom', amount: 1 } },
        ],
        { attributes: { region: 'eu' } },
      )
      .catch((caught: unknown) => caught);
    expect((error as EngineError).code).toBe('invalid_definition_attributes');
    expect((error as EngineError).details).toMatchObject({ index: 1 });
    expect(await written()).toEqual(before);
  });
});

describe("the engine's list by attributes", () => {
  it('finds every attribute given, types included, newest first a page at a time', async () => {
    const app = engine();
    const ids = { number: [] as string[], string: [] as string[], eu: [] as string[] };
    for (let n = 0; n < 7; n += 1) {
      const eu = n % 2 === 0;
      const { workflow } = await app.submit(
        'attr-plain',
        { n },
        { attributes: { shard: 5, region: eu ? 'eu' : 'us' } },
      );
      ids.number.push(workflow.id);
      if (eu) ids.eu.push(workflow.id);
    }
    for (let n = 0; n < 3; n += 1) {
      const { workflow } = await app.submit('attr-plain', { n }, { attributes: { shard: '5' } });
      ids.string.push(workflow.id);
    }
    const reads = createReadModel(app.db);
    const all = async (attributes: Record<string, string | number | boolean>, limit: number) => {
      const found: string[] = [];
      let after: WorkflowKey | null = null;
      for (;;) {
        const page = await reads.workflowPage({ attributes }, { after, limit });
        found.push(...page.rows.map((row) => row.workflow.id));
        if (!page.hasMore) return found;
        expect(page.rows).toHaveLength(limit);
        after = page.rows.at(-1)?.key ?? null;
      }
    };
    expect(await all({ shard: 5 }, 3)).toEqual([...ids.number].reverse());
    expect(await all({ shard: '5' }, 2)).toEqual([...ids.string].reverse());
    expect(await all({ shard: 5, region: 'eu' }, 2)).toEqual([...ids.eu].reverse());
    expect(await all({ region: 'eu', shard: '5' }, 2)).toEqual([]);
    expect(await all({ shard: true }, 2)).toEqual([]);
    const oldest = await reads.workflowPage(
      { attributes: { shard: 5 } },
      { limit: 3, order: 'oldest_first' },
    );
    expect(oldest.rows.map((row) => row.workflow.id)).toEqual(ids.number.slice(0, 3));
    expect(oldest.rows[0]?.workflow.attributes).toEqual({ region: 'eu', shard: 5 });
    expect(await reads.workflowCount({ attributes: { shard: 5 } }, 100)).toBe(7);
    expect(await reads.workflowCount({ attributes: { shard: 5 } }, 4)).toBe(4);
    expect(await reads.workflowCount({ attributes: { shard: 5, region: 'us' } }, 100)).toBe(3);
    // The other filters hold on the workflows the attributes find.
    expect(
      (await reads.workflowPage({ attributes: { shard: 5 }, name: 'attr-invoice' }, { limit: 5 }))
        .rows,
    ).toEqual([]);
    expect(
      (
        await reads.workflowPage(
          { attributes: { shard: 5 }, states: ['queued'], name: 'attr-plain' },
          { limit: 10 },
        )
      ).rows,
    ).toHaveLength(7);
    expect(
      (await reads.workflowPage({ attributes: { shard: 5 }, states: ['dead'] }, { limit: 10 }))
        .rows,
    ).toEqual([]);
  });
});
