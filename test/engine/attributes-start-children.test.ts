/**
 * R55 with R43: `startChildren(..., { attributes })` and `startChild(..., { attributes })` give
 * every child attributes of the call's, merged with those it inherits from its parent and its
 * definition's by the rule of a submit: a key given twice must have one value. A bad one
 * (`invalid_attributes`) or one that changes an inherited key (`conflicting_attributes`) fails
 * the step's attempt (`invalid_argument`, never retried) and writes no child. A child that a
 * replay starts again in its place (R47) keeps them. Real engine, real PostgreSQL, real workers.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { StepError } from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { childAttributeTerms } from './attribute-support';
import { finished, startChild, startChildren, workflow } from './children-support';

const database = useTestDatabase();
const url = () => database().url;
const queue = 'q-attr-start';

/** How many times each parcel's step has run; a parcel named `fail-once` fails its first run. */
const runs = new Map<string, number>();
/** Parcels named `held` pass a boundary every few milliseconds until this is true. */
let released = false;

/** A child that labels itself `kind: "parcel"` through its definition. */
const ship = workflow({
  name: 'attr-start-ship',
  input: z.object({ parcel: z.string() }),
  attributes: () => ({ kind: 'parcel' }),
})
  .step('send', {
    queue,
    maxAttempts: 1,
    run: async (ctx) => {
      const run = (runs.get(ctx.input.parcel) ?? 0) + 1;
      runs.set(ctx.input.parcel, run);
      if (ctx.input.parcel === 'fail-once' && run === 1) {
        throw new StepError('invalid_argument', 'refused on purpose');
      }
      while (ctx.input.parcel === 'held' && !released) {
        await sleep(5);
        await ctx.boundary();
      }
      return `sent ${ctx.input.parcel}`;
    },
  })
  .build();

/** Starts one child per parcel with the attributes its input gives (as JSON, any shape). */
const batch = workflow({
  name: 'attr-start-batch',
  input: z.object({ parcels: z.array(z.string()), attributes: z.string(), single: z.boolean() }),
})
  .step('start', {
    queue,
    maxAttempts: 3,
    run: (ctx) => {
      const attributes = JSON.parse(ctx.input.attributes);
      return ctx.input.single
        ? startChild(ship, { parcel: ctx.input.parcels[0] ?? '' }, { attributes })
        : startChildren(
            ship,
            ctx.input.parcels.map((parcel) => ({ parcel })),
            { attributes },
          );
    },
  })
  .build();

const engine = () => testEngine(url(), { workflows: [ship, batch] });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

async function childRows(parentId: string) {
  return query<{ input: { parcel: string }; attributes: unknown; replaced: boolean }>(
    url(),
    `select input, attributes, replaced from causeway_workflows
      where parent_workflow_id = $1 order by child_index, created_at`,
    [parentId],
  );
}

/** Submits the batch under `tenant: "acme"` and waits until it is terminal. */
async function runBatch(parcels: string[], attributes: unknown, single = false) {
  const app = engine();
  const worker = await app.startWorker({ queues: [queue], concurrency: 4 });
  const { workflow: submitted } = await app.submit(
    'attr-start-batch',
    { parcels, attributes: JSON.stringify(attributes), single },
    { attributes: { tenant: 'acme' } },
  );
  const done = await finished(app, submitted.id);
  await worker.stop();
  const start = done.tasks.find((task) => task.step === 'start');
  return { done, start, children: await childRows(submitted.id) };
}

describe("attributes of a startChildren call's children", () => {
  it("adds the call's attributes to the parent's and the definition's, for each child", async () => {
    const { done, children } = await runBatch(['a', 'b'], { platform: 'x', tenant: 'acme' });
    expect(done.state).toBe('succeeded');
    const expected = { kind: 'parcel', platform: 'x', tenant: 'acme' };
    expect(children.map((child) => child.attributes)).toEqual([expected, expected]);
    // The index's terms (R55), so the call's attribute finds them like any other.
    const terms = ['kind="parcel"', 'platform="x"', 'tenant="acme"'];
    expect(await childAttributeTerms(url(), done.id)).toEqual([...terms, ...terms]);
    expect(await logMismatches(url())).toEqual([]);
  });

  it('gives the one child of startChild the same', async () => {
    const { done, children } = await runBatch(['solo'], { platform: 'y' }, true);
    expect(done.state).toBe('succeeded');
    expect(children.map((child) => child.attributes)).toEqual([
      { kind: 'parcel', platform: 'y', tenant: 'acme' },
    ]);
  });

  for (const [what, attributes, code, words] of [
    ["changes the parent's tenant", { tenant: 'globex' }, 'conflicting_attributes', '"globex"'],
    ["changes the definition's kind", { kind: 'letter' }, 'conflicting_attributes', '"letter"'],
    [
      'makes more than 16 keys with the inherited ones',
      Object.fromEntries(Array.from({ length: 15 }, (_, n) => [`k${n}`, n])),
      'conflicting_attributes',
      'over the limit of 16',
    ],
    ['has a bad key', { 'a b': 1 }, 'invalid_attributes', '"a b"'],
    ['has a null value', { platform: null }, 'invalid_attributes', 'is null'],
    ['is an array', ['x'], 'invalid_attributes', 'plain object'],
  ] as const) {
    it(`fails the step with ${code} and writes no child when the call ${what}`, async () => {
      const { done, start, children } = await runBatch(['a', 'b'], attributes);
      expect(start?.state).toBe('dead');
      expect(start?.attempt).toBe(1);
      expect(start?.lastErrorCategory).toBe('invalid_argument');
      expect(start?.lastError).toContain(code);
      expect(start?.lastError).toContain(words);
      expect(children).toEqual([]);
      expect(await childAttributeTerms(url(), done.id)).toEqual([]);
      expect(await logMismatches(url())).toEqual([]);
    });
  }

  it("names the call's attributes in a conflict", async () => {
    const { start } = await runBatch(['a'], { tenant: 'globex' });
    expect(start?.lastError).toContain("the startChildren call's attributes");
  });

  it('keeps them on a child that a replay starts again in its place', async () => {
    released = false;
    const app = engine();
    const worker = await app.startWorker({ queues: [queue], concurrency: 4 });
    const { workflow: submitted } = await app.submit(
      'attr-start-batch',
      { parcels: ['fail-once', 'held'], attributes: '{"platform":"x"}', single: false },
      { attributes: { tenant: 'acme' } },
    );
    // `fail-once` fails, so the step fails and cancels `held` at its next boundary.
    const failed = await finished(app, submitted.id);
    const start = failed.tasks.find((task) => task.step === 'start');
    expect(start?.state).toBe('dead');
    released = true;
    await app.replayTask(start?.id as string, { operator: 'ops', reason: 'retry the fan-out' });
    await waitFor(async () => (await app.getWorkflow(submitted.id))?.state === 'succeeded', {
      timeoutMs: 15_000,
      description: 'the replayed fan-out succeeding',
    });
    await worker.stop();
    const rows = await childRows(submitted.id);
    const expected = { kind: 'parcel', platform: 'x', tenant: 'acme' };
    expect(rows.map((row) => [row.input.parcel, row.replaced, row.attributes])).toEqual([
      ['fail-once', false, expected],
      ['held', true, expected],
      ['held', false, expected],
    ]);
    expect(await logMismatches(url())).toEqual([]);
  });
});
