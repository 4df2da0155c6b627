/**
 * R55 with R43/R44: a child workflow inherits every attribute of its parent, and its own
 * definition's attributes are added to them; a child whose definition gives a parent's key
 * another value is refused with the whole step, writing no child: a map step ends dead with
 * step_input_failed (R58), a `startChildren` attempt fails with invalid_argument (R43).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { childAttributeTerms } from './attribute-support';
import { finished, startChildren, workflow } from './children-support';

const database = useTestDatabase();
const url = () => database().url;

/** A child that labels itself by its input; `tenant` comes from its parent, or clashes. */
const ship = workflow({
  name: 'attr-ship',
  input: z.object({ parcel: z.string(), tenant: z.string().optional() }),
  attributes: (input) => ({
    kind: 'parcel',
    ...(input.tenant === undefined ? {} : { tenant: input.tenant }),
  }),
})
  .step('send', { queue: 'q-attr-children', run: (ctx) => `sent ${ctx.input.parcel}` })
  .build();

const order = workflow({
  name: 'attr-order',
  input: z.object({ parcels: z.array(z.string()), childTenant: z.string().optional() }),
})
  .map('each', {
    over: (ctx) => ctx.input.parcels,
    workflow: ship,
    input: (parcel, _index, ctx) => ({
      parcel,
      ...(ctx.input.childTenant === undefined ? {} : { tenant: ctx.input.childTenant }),
    }),
  })
  .build();

const batch = workflow({
  name: 'attr-batch',
  input: z.object({ parcels: z.array(z.string()), childTenant: z.string().optional() }),
})
  .step('start', {
    queue: 'q-attr-children',
    maxAttempts: 1,
    run: (ctx) =>
      startChildren(
        ship,
        ctx.input.parcels.map((parcel) => ({
          parcel,
          ...(ctx.input.childTenant === undefined ? {} : { tenant: ctx.input.childTenant }),
        })),
      ),
  })
  .build();

const engine = () => testEngine(url(), { workflows: [ship, order, batch] });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

async function childAttributes(parentId: string): Promise<unknown[]> {
  const rows = await query<{ attributes: unknown }>(
    url(),
    `select attributes from causeway_workflows where parent_workflow_id = $1
      order by child_index`,
    [parentId],
  );
  return rows.map((row) => row.attributes);
}

describe('attributes of child workflows', () => {
  for (const parent of ['attr-order', 'attr-batch']) {
    it(`${parent}: each child has its parent's attributes and its definition's`, async () => {
      const app = engine();
      const worker = await app.startWorker({ queues: ['q-attr-children'], concurrency: 4 });
      const { workflow: submitted } = await app.submit(
        parent,
        { parcels: ['a', 'b'] },
        { attributes: { tenant: 'acme', tier: 2 } },
      );
      const done = await finished(app, submitted.id);
      await worker.stop();
      expect(done.state).toBe('succeeded');
      expect(done.attributes).toEqual({ tenant: 'acme', tier: 2 });
      const expected = { kind: 'parcel', tenant: 'acme', tier: 2 };
      expect(await childAttributes(submitted.id)).toEqual([expected, expected]);
      const terms = ['kind="parcel"', 'tenant="acme"', 'tier=2'];
      expect(await childAttributeTerms(url(), submitted.id)).toEqual([...terms, ...terms]);
      expect(await logMismatches(url())).toEqual([]);
    });

    it(`${parent}: a child's tenant that agrees with its parent's is one attribute`, async () => {
      const app = engine();
      const worker = await app.startWorker({ queues: ['q-attr-children'], concurrency: 4 });
      const { workflow: submitted } = await app.submit(
        parent,
        { parcels: ['a'], childTenant: 'acme' },
        { attributes: { tenant: 'acme' } },
      );
      const done = await finished(app, submitted.id);
      await worker.stop();
      expect(done.state).toBe('succeeded');
      expect(await childAttributes(submitted.id)).toEqual([{ kind: 'parcel', tenant: 'acme' }]);
    });
  }

  it("a map child whose tenant differs from its parent's ends the step dead (step_input_failed), no child written", async () => {
    const app = engine();
    const { workflow: submitted } = await app.submit(
      'attr-order',
      { parcels: ['a', 'b'], childTenant: 'globex' },
      { attributes: { tenant: 'acme' } },
    );
    const done = await finished(app, submitted.id);
    const each = done.tasks.find((task) => task.step === 'each');
    expect(each?.state).toBe('dead');
    expect(each?.transitions.at(-1)?.reason).toBe('step_input_failed');
    expect(each?.lastError).toContain('conflicting_attributes');
    expect(each?.lastError).toContain('"globex"');
    expect(await childAttributes(submitted.id)).toEqual([]);
    expect(await childAttributeTerms(url(), submitted.id)).toEqual([]);
  });

  it("a startChildren child whose tenant differs from its parent's fails the attempt (invalid_argument), no child written", async () => {
    const app = engine();
    const worker = await app.startWorker({ queues: ['q-attr-children'], concurrency: 4 });
    const { workflow: submitted } = await app.submit(
      'attr-batch',
      { parcels: ['a'], childTenant: 'globex' },
      { attributes: { tenant: 'acme' } },
    );
    const done = await finished(app, submitted.id);
    await worker.stop();
    const start = done.tasks.find((task) => task.step === 'start');
    expect(start?.state).toBe('dead');
    expect(start?.lastErrorCategory).toBe('invalid_argument');
    expect(start?.lastError).toContain('conflicting_attributes');
    expect(await childAttributes(submitted.id)).toEqual([]);
    expect(await logMismatches(url())).toEqual([]);
  });
});
