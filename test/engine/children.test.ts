/**
 * R43–R47: a step's `run` returns `startChildren(...)`; the children are written with the step's
 * edge, run as ordinary workflows, and settle the step by fixed rules. Real engine, real
 * PostgreSQL, real workers.
 */

import { workflow } from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { finished, startChild, startChildren } from './children-support';

const database = useTestDatabase();
const url = () => database().url;

/** A child that doubles its number; a number in `failing` fails for good; 99 waits for an event. */
const failing = new Set<number>();
const double = workflow({ name: 'kids-double', input: z.object({ n: z.number() }) })
  .step('work', {
    queue: 'q-kids',
    maxAttempts: 1,
    run: (ctx) => {
      if (failing.has(ctx.input.n)) throw new Error(`cannot double ${ctx.input.n}`);
      return ctx.input.n * 2;
    },
  })
  .build();
const slow = workflow({ name: 'kids-slow', input: z.object({ n: z.number() }) })
  .event('hold', { name: 'kids.release', key: (ctx) => String(ctx.input.n), timeoutMs: 600_000 })
  .build();

const parent = workflow({ name: 'kids-parent', input: z.object({ ns: z.array(z.number()) }) })
  .step('fan', {
    queue: 'q-kids',
    run: (ctx) =>
      startChildren(
        double,
        ctx.input.ns.map((n) => ({ n })),
      ),
  })
  .step('sum', {
    after: ['fan'],
    queue: 'q-kids',
    run: (ctx) => (ctx.results.fan as number[]).reduce((a, b) => a + b, 0),
  })
  .build();

/** Starts a double per number and one slow child per number in `slowNs`. */
const mixed = workflow({
  name: 'kids-mixed',
  input: z.object({
    ns: z.array(z.number()),
    slowNs: z.array(z.number()),
    tolerate: z.number().optional(),
  }),
})
  .step('fan', {
    queue: 'q-kids',
    run: (ctx) =>
      startChildren(
        'kids-any',
        [
          ...ctx.input.ns.map((n) => ({ kind: 'double' as const, n })),
          ...ctx.input.slowNs.map((n) => ({ kind: 'slow' as const, n })),
        ],
        ctx.input.tolerate === undefined ? {} : { tolerate: { failures: ctx.input.tolerate } },
      ),
  })
  .build();
/** One workflow for both kinds of child: a double step, or a wait when `kind` is slow. */
const anyKid = workflow({
  name: 'kids-any',
  input: z.object({ kind: z.enum(['double', 'slow']), n: z.number() }),
})
  .step('work', {
    queue: 'q-kids',
    maxAttempts: 1,
    run: async (ctx) => {
      if (failing.has(ctx.input.n)) throw new Error(`cannot double ${ctx.input.n}`);
      if (ctx.input.kind === 'slow') {
        // Held until released or cancelled: a boundary confirms the cancel (R13).
        while (!released.has(ctx.input.n)) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          await ctx.boundary();
        }
      }
      return ctx.input.n * 2;
    },
  })
  .build();
const released = new Set<number>();

const detachedParent = workflow({ name: 'kids-detached', input: z.object({}) })
  .step('fire', {
    queue: 'q-kids',
    run: () => startChildren(double, [{ n: 5 }, { n: 6 }], { detached: true }),
  })
  .build();

const singleParent = workflow({ name: 'kids-single', input: z.object({ n: z.unknown() }) })
  .step('one', { queue: 'q-kids', run: (ctx) => startChild('kids-double', { n: ctx.input.n }) })
  .build();

/** Its deadline passes while its step awaits a slow child. */
const hurried = workflow({ name: 'kids-hurried', input: z.object({}), deadlineMs: 1_500 })
  .step('fan', {
    queue: 'q-kids',
    run: () => startChildren(anyKid, [{ kind: 'slow' as const, n: 501 }]),
  })
  .build();

/** Children that wait for an event: the send completes them through the full decision. */
const waiters = workflow({ name: 'kids-waiters', input: z.object({ ns: z.array(z.number()) }) })
  .step('fan', {
    queue: 'q-kids',
    run: (ctx) =>
      startChildren(
        slow,
        ctx.input.ns.map((n) => ({ n })),
      ),
  })
  .build();

const workflows = [
  double,
  slow,
  parent,
  mixed,
  anyKid,
  detachedParent,
  singleParent,
  hurried,
  waiters,
];
const engine = () => testEngine(url(), { workflows });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

describe('startChildren', () => {
  it('runs one child per input and gives the step their results in input order', async () => {
    const app = engine();
    const worker = await app.startWorker({ queues: ['q-kids'], concurrency: 4 });
    const { workflow: submitted } = await app.submit('kids-parent', { ns: [1, 2, 3] });
    const done = await finished(app, submitted.id);
    await worker.stop();
    expect(done.state).toBe('succeeded');
    const fan = done.tasks.find((task) => task.step === 'fan');
    const sum = done.tasks.find((task) => task.step === 'sum');
    expect(fan?.output).toEqual([2, 4, 6]);
    expect(sum?.output).toBe(12);
    expect(fan?.transitions.map((row) => `${row.from}→${row.to} ${row.reason}`)).toEqual([
      'null→pending submitted'.replace('pending', 'queued'),
      'queued→leased lease_acquired',
      'leased→awaiting_children children_started',
      'awaiting_children→succeeded children_succeeded',
    ]);
    const children = await query<{
      id: string;
      parent_task_id: string;
      child_index: number;
      root_workflow_id: string;
      depth: number;
      state: string;
    }>(
      url(),
      `select id, parent_task_id, child_index, root_workflow_id, depth, state
         from causeway_workflows where parent_workflow_id = $1 order by child_index`,
      [submitted.id],
    );
    expect(
      children.map((row) => [
        row.child_index,
        row.parent_task_id,
        row.root_workflow_id,
        row.depth,
        row.state,
      ]),
    ).toEqual([
      [0, fan?.id, submitted.id, 1, 'succeeded'],
      [1, fan?.id, submitted.id, 1, 'succeeded'],
      [2, fan?.id, submitted.id, 1, 'succeeded'],
    ]);
    expect(await logMismatches(url())).toEqual([]);
  });

  it('fails fast: a dead child ends the step dead and cancels its unfinished siblings', async () => {
    failing.add(13);
    const app = engine();
    const worker = await app.startWorker({ queues: ['q-kids'], concurrency: 8 });
    const { workflow: submitted } = await app.submit('kids-mixed', {
      ns: [13],
      slowNs: [101, 102],
    });
    const done = await finished(app, submitted.id);
    await worker.stop();
    expect(done.state).toBe('dead');
    const fan = done.tasks.find((task) => task.step === 'fan');
    expect(fan?.state).toBe('dead');
    const failed = fan?.transitions.at(-1);
    expect([failed?.reason, failed?.errorSummary]).toEqual([
      'children_failed',
      '1 of 3 child workflows failed',
    ]);
    const children = await query<{ state: string; child_index: number; actor: string }>(
      url(),
      `select w.state, w.child_index,
          (select l.actor from causeway_transitions l where l.workflow_id = w.id and l.task_id is not null
            and l.reason in ('cancel_requested', 'cancelled_before_start') order by l.id limit 1) as actor
         from causeway_workflows w where w.parent_workflow_id = $1 order by w.child_index`,
      [submitted.id],
    );
    expect(children.map((row) => row.state)).toEqual(['dead', 'cancelled', 'cancelled']);
    expect(children.slice(1).map((row) => row.actor)).toEqual([
      `parent:${fan?.id}`,
      `parent:${fan?.id}`,
    ]);
    expect(await logMismatches(url())).toEqual([]);
  });

  it('tolerates failures within the tolerance and gives each child its outcome', async () => {
    failing.add(23);
    const app = engine();
    const worker = await app.startWorker({ queues: ['q-kids'], concurrency: 4 });
    const { workflow: submitted } = await app.submit('kids-mixed', {
      ns: [21, 23, 22],
      slowNs: [],
      tolerate: 1,
    });
    const done = await finished(app, submitted.id);
    await worker.stop();
    expect(done.state).toBe('succeeded');
    const output = done.tasks.find((task) => task.step === 'fan')?.output as {
      state: string;
      result?: unknown;
      reason?: string;
    }[];
    expect(output.map(({ state, result, reason }) => ({ state, result, reason }))).toEqual([
      { state: 'succeeded', result: 42, reason: undefined },
      { state: 'dead', result: undefined, reason: 'attempts_exhausted' },
      { state: 'succeeded', result: 44, reason: undefined },
    ]);
  });

  it('refuses a child input that fails its schema: the step is dead and no child is written', async () => {
    const app = engine();
    const worker = await app.startWorker({ queues: ['q-kids'], concurrency: 2 });
    const { workflow: submitted } = await app.submit('kids-single', { n: 'seven' });
    const done = await finished(app, submitted.id);
    await worker.stop();
    const one = done.tasks.find((task) => task.step === 'one');
    expect(one?.state).toBe('dead');
    expect(one?.lastErrorCategory).toBe('invalid_argument');
    expect(one?.lastError).toMatch(/^startChildren: child 0: invalid_input: /);
    const children = await query(
      url(),
      'select id from causeway_workflows where parent_workflow_id = $1',
      [submitted.id],
    );
    expect(children).toEqual([]);
  });

  it('startChild gives the one child result; detached children are not awaited', async () => {
    const app = engine();
    const worker = await app.startWorker({ queues: ['q-kids'], concurrency: 4 });
    const single = await app.submit('kids-single', { n: 8 });
    const detached = await app.submit('kids-detached', {});
    const one = await finished(app, single.workflow.id);
    const fired = await finished(app, detached.workflow.id);
    expect(one.tasks[0]?.output).toBe(16);
    const ids = fired.tasks[0]?.output as string[];
    expect(fired.tasks[0]?.transitions.map((row) => row.reason)).toEqual([
      'submitted',
      'lease_acquired',
      'completed',
    ]);
    const rows = await query<{ id: string; detached: boolean }>(
      url(),
      'select id, detached from causeway_workflows where parent_workflow_id = $1 order by child_index',
      [detached.workflow.id],
    );
    expect(rows).toEqual(ids.map((id) => ({ id, detached: true })));
    await waitFor(async () => {
      const states = await Promise.all(ids.map(async (id) => (await app.getWorkflow(id))?.state));
      return states.every((state) => state === 'succeeded');
    });
    await worker.stop();
  });

  it('a cancel of the parent asks its children to cancel; the step ends cancelled once they stop', async () => {
    const app = engine();
    const worker = await app.startWorker({ queues: ['q-kids'], concurrency: 8 });
    const { workflow: submitted } = await app.submit('kids-mixed', {
      ns: [31],
      slowNs: [301, 302],
    });
    await waitFor(async () => {
      const rows = await query<{ n: string }>(
        url(),
        `select count(*) as n from causeway_workflows w join causeway_tasks t on t.workflow_id = w.id
          where w.parent_workflow_id = $1 and t.state in ('leased', 'succeeded')`,
        [submitted.id],
      );
      return Number(rows[0]?.n) === 3;
    });
    await app.cancelWorkflow(submitted.id, { reason: 'changed my mind' });
    const done = await finished(app, submitted.id);
    await worker.stop();
    expect(done.state).toBe('cancelled');
    const fan = done.tasks.find((task) => task.step === 'fan');
    expect(fan?.transitions.slice(-2).map((row) => `${row.from}→${row.to} ${row.reason}`)).toEqual([
      'awaiting_children→cancel_requested cancel_requested',
      'cancel_requested→cancelled children_cancelled',
    ]);
    const states = await query<{ state: string }>(
      url(),
      'select state from causeway_workflows where parent_workflow_id = $1 order by child_index',
      [submitted.id],
    );
    expect(states.map((row) => row.state)).toEqual(['succeeded', 'cancelled', 'cancelled']);
    expect(await logMismatches(url())).toEqual([]);
  });

  it('an event that completes the last waiting child settles the step in its transaction', async () => {
    const app = engine();
    const worker = await app.startWorker({ queues: ['q-kids'], concurrency: 2 });
    const { workflow: submitted } = await app.submit('kids-waiters', { ns: [601, 602] });
    await waitFor(async () => {
      const rows = await query<{ n: string }>(
        url(),
        `select count(*) as n from causeway_workflows where parent_workflow_id = $1 and state = 'waiting'`,
        [submitted.id],
      );
      return Number(rows[0]?.n) === 2;
    });
    await app.sendEvents([
      { name: 'kids.release', key: '601', payload: 'one' },
      { name: 'kids.release', key: '602', payload: 'two' },
    ]);
    const done = await finished(app, submitted.id);
    await worker.stop();
    expect(done.state).toBe('succeeded');
    expect(done.tasks[0]?.output).toEqual(['one', 'two']);
    const settled = await query<{ same: boolean }>(
      url(),
      `select (select xmin from causeway_tasks where id = $1)::text =
              (select max(t.xmin::text) from causeway_tasks t join causeway_workflows w on w.id = t.workflow_id
                where w.parent_workflow_id = $2 and t.state = 'succeeded' and t.output = '"two"') as same`,
      [done.tasks[0]?.id, submitted.id],
    );
    expect(settled).toEqual([{ same: true }]);
    expect(await logMismatches(url())).toEqual([]);
  });

  it('children share the deadline; past it the step ends dead and its children are cancelled', async () => {
    const app = engine();
    const worker = await app.startWorker({ queues: ['q-kids'], concurrency: 4 });
    const { workflow: submitted } = await app.submit('kids-hurried', {});
    const done = await finished(app, submitted.id);
    await worker.stop();
    const fan = done.tasks.find((task) => task.step === 'fan');
    // The child shares the deadline: whichever the sweeper ends first, the step ends dead
    // from awaiting_children, and nothing of the tree runs on.
    expect(fan?.state).toBe('dead');
    expect(fan?.transitions.at(-1)?.from).toBe('awaiting_children');
    expect(['deadline_exceeded', 'children_failed']).toContain(fan?.transitions.at(-1)?.reason);
    const rows = await query<{ state: string; deadline_ok: boolean }>(
      url(),
      `select w.state, t.deadline_at <= (select deadline_at from causeway_tasks where id = $2) as deadline_ok
         from causeway_workflows w join causeway_tasks t on t.workflow_id = w.id
        where w.parent_workflow_id = $1`,
      [submitted.id, fan?.id],
    );
    expect(rows).toHaveLength(1);
    expect(['cancelled', 'dead']).toContain(rows[0]?.state);
    expect(rows[0]?.deadline_ok).toBe(true);
    expect(await logMismatches(url())).toEqual([]);
  });

  it('a replay of the dead step replays its dead children, restarts the cancelled ones, keeps the rest', async () => {
    failing.add(43);
    const app = engine();
    const worker = await app.startWorker({ queues: ['q-kids'], concurrency: 8 });
    const { workflow: submitted } = await app.submit('kids-mixed', { ns: [41, 43], slowNs: [401] });
    const dead = await finished(app, submitted.id);
    expect(dead.state).toBe('dead');
    const fan = dead.tasks.find((task) => task.step === 'fan');
    // The slow sibling confirms its cancel at its next boundary.
    const before = await waitFor(async () => {
      const rows = await query<{ id: string; state: string }>(
        url(),
        'select id, state from causeway_workflows where parent_workflow_id = $1 order by child_index',
        [submitted.id],
      );
      return rows.every((row) => ['succeeded', 'dead', 'cancelled'].includes(row.state)) && rows;
    });
    expect(before.map((row) => row.state)).toEqual(['succeeded', 'dead', 'cancelled']);
    failing.delete(43);
    released.add(401);
    await app.replayTask(fan?.id as string, { operator: 'alice', reason: 'fixed the doubler' });
    const done = await finished(app, submitted.id);
    await worker.stop();
    expect(done.state).toBe('succeeded');
    expect(done.tasks.find((task) => task.step === 'fan')?.output).toEqual([82, 86, 802]);
    const after = await query<{ id: string; state: string; replaced: boolean }>(
      url(),
      'select id, state, replaced from causeway_workflows where parent_workflow_id = $1 order by child_index, created_at',
      [submitted.id],
    );
    expect(
      after.map((row) => [
        row.id === before[0]?.id || row.id === before[1]?.id || row.id === before[2]?.id,
        row.state,
        row.replaced,
      ]),
    ).toEqual([
      [true, 'succeeded', false],
      [true, 'succeeded', false],
      [true, 'cancelled', true],
      [false, 'succeeded', false],
    ]);
    expect(await logMismatches(url())).toEqual([]);
  });
});
