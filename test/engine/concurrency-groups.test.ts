/**
 * R50 where an operator looks: `engine.concurrencyGroups()` lists every group the definitions
 * declare (steps with `concurrency`, shared groups, map steps' groups) and every group with a
 * busy key in the database, each busy key with its held slots, its ready tasks and the tasks
 * holding it, busiest first and bounded; bad input is refused.
 */
import { type Engine, EngineError } from '@causeway/engine';
import { defineWorkflow, map, step } from '@causeway/workflow';
import { workflowRegistry } from '@causeway/workflow/internal';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { claimReadyTasks } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import { useTestDatabase } from '../helpers/database';
import { testEngine } from '../helpers/engine';

const database = useTestDatabase();
const url = () => database().url;

const queue = 'q-groups';
const input = z.object({ tenant: z.string() });
type Input = z.output<typeof input>;

const send = defineWorkflow({
  name: 'group-send',
  input,
  steps: {
    send: step<Input>({
      queue,
      concurrency: { key: (ctx) => ctx.input.tenant, limit: 2 },
      run: () => null,
    }),
  },
});
const sharedStep = (limit: number) =>
  step<Input>({
    queue,
    concurrency: { key: (ctx) => ctx.input.tenant, limit, group: 'shared-api' },
    run: () => null,
  });
const shipA = defineWorkflow({ name: 'group-ship-a', input, steps: { ship: sharedStep(3) } });
const shipB = defineWorkflow({ name: 'group-ship-b', input, steps: { ship: sharedStep(3) } });
const child = defineWorkflow({
  name: 'group-child',
  input: z.object({ n: z.number().int() }),
  steps: { work: step({ run: () => null }) },
});
const parent = defineWorkflow({
  name: 'group-parent',
  input: z.object({}),
  steps: {
    each: map({
      over: () => [1, 2],
      input: (n: number) => ({ n }),
      workflow: child,
      concurrency: 4,
    }),
  },
});
const foreign = defineWorkflow({
  name: 'group-foreign',
  input,
  steps: {
    call: step<Input>({
      queue,
      concurrency: { key: (ctx) => ctx.input.tenant, limit: 7, group: 'foreign' },
      run: () => null,
    }),
  },
});
const workflows = [send, shipA, shipB, parent, child];
const definitions = workflowRegistry(workflows);
const engine = (): Engine => testEngine(url(), { workflows });

/** Claims up to `limit` ready tasks of the queue, as a worker's claim does, and commits. */
async function claim(cw: Engine, limit: number): Promise<string[]> {
  const result = await cw.db
    .transaction()
    .execute((tx) =>
      claimReadyTasks(
        tx,
        { definitions, leaseMs: 30_000, random: Math.random },
        { queue, limit, holder: cw.holder },
      ),
    );
  return result.claimed.map((claimed) => claimed.task.id);
}

let claimed: string[] = [];
let claimedBy = '';

beforeAll(async () => {
  const cw = engine();
  await cw.migrate();
  for (let n = 0; n < 5; n += 1) await cw.submit(send.name, { tenant: 'acme' });
  await cw.submit(send.name, { tenant: 'bolt' });
  // Another engine's group, with two tasks not yet due.
  const other = testEngine(url(), { workflows: [foreign] });
  await other.submit(foreign.name, { tenant: 'zed' });
  await other.submit(foreign.name, { tenant: 'zed' });
  await other.close();
  await sql`update causeway_clock set offset_ms = offset_ms + 60000`.execute(cw.db);
  // The foreign tasks are not this engine's: its claim leaves them queued.
  claimed = await claim(cw, 10);
  claimedBy = cw.holder;
  await cw.close();
});

describe('engine.concurrencyGroups (R50)', () => {
  it('lists declared groups with their steps and limits, and live keys busiest first', async () => {
    const cw = engine();
    const groups = await cw.concurrencyGroups();
    expect(groups.map((group) => group.group)).toEqual([
      'foreign',
      'group-send/send',
      'map:group-parent/each',
      'shared-api',
    ]);
    const [foreignGroup, sendGroup, mapGroup, shared] = groups;
    expect(sendGroup).toMatchObject({
      limit: 2,
      defined: true,
      steps: ['group-send/send'],
      keysBusy: 2,
      held: 3,
      queued: 3,
    });
    expect(
      sendGroup?.keys.map(({ key, limit, held, queued }) => ({ key, limit, held, queued })),
    ).toEqual([
      { key: 'acme', limit: 2, held: 2, queued: 3 },
      { key: 'bolt', limit: 2, held: 1, queued: 0 },
    ]);
    const holders = sendGroup?.keys.flatMap((key) => key.holders) ?? [];
    expect(holders.map((holder) => holder.taskId).sort()).toEqual([...claimed].sort());
    expect(holders.every((h) => h.state === 'leased' && h.holder === claimedBy)).toBe(true);
    expect(holders.every((h) => h.step === 'send' && h.since instanceof Date)).toBe(true);
    expect(mapGroup).toMatchObject({
      limit: 4,
      defined: true,
      steps: ['group-child/work'],
      keysBusy: 0,
      held: 0,
      queued: 0,
      keys: [],
    });
    expect(shared).toMatchObject({
      limit: 3,
      defined: true,
      steps: ['group-ship-a/ship', 'group-ship-b/ship'],
      keysBusy: 0,
    });
    // Not declared here: listed from the rows, with the limit its tasks stored.
    expect(foreignGroup).toMatchObject({
      limit: 7,
      defined: false,
      steps: [],
      keysBusy: 1,
      held: 0,
      queued: 2,
    });
    expect(foreignGroup?.keys.map((key) => key.key)).toEqual(['zed']);
    await cw.close();
  });

  it('shows at most the keys asked for, with the totals over all of them', async () => {
    const cw = engine();
    const sendGroup = (await cw.concurrencyGroups({ keys: 1 })).find(
      (group) => group.group === 'group-send/send',
    );
    expect(sendGroup?.keys.map((key) => key.key)).toEqual(['acme']);
    expect(sendGroup).toMatchObject({ keysBusy: 2, held: 3, queued: 3 });
    await cw.close();
  });

  it('counts a slot freed when its holder ends', async () => {
    const cw = engine();
    const [first] = claimed;
    await sql`update causeway_tasks set state = 'succeeded', lease_holder = null
      where id = ${first as string}`.execute(cw.db);
    try {
      const sendGroup = (await cw.concurrencyGroups()).find(
        (group) => group.group === 'group-send/send',
      );
      expect(sendGroup?.held).toBe(2);
      expect(sendGroup?.keys.flatMap((key) => key.holders).map((h) => h.taskId)).not.toContain(
        first,
      );
    } finally {
      await sql`update causeway_tasks set state = 'leased', lease_holder = ${claimedBy}
        where id = ${first as string}`.execute(cw.db);
      await cw.close();
    }
  });

  it.each([0, 501, 1.5])('refuses keys = %s with invalid_request', async (keys) => {
    const cw = engine();
    const refusal = await cw.concurrencyGroups({ keys }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(EngineError);
    expect((refusal as EngineError).code).toBe('invalid_request');
    await cw.close();
  });
});
