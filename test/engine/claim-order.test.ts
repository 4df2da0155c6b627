/**
 * Which ready tasks a claim takes (R4, R8): the earliest `run_at` first, whatever order the
 * tasks were inserted in and whatever their ids (when a task is due: `claim-time.test.ts`).
 *
 * Both claim paths are checked: the one-statement claim (`claimReadyTasks`, what a worker
 * runs) and the full claim (`claimInFull`: `taskClaimLoad`, then the machine).
 */
import type { Engine } from '@causeway/engine';
import { defineWorkflow, step } from '@causeway/workflow';
import { workflowRegistry } from '@causeway/workflow/internal';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ClaimResult } from '../../packages/engine/src/runtime/claim/claimed-task';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { claimOf } from './claim-paths';
import { rolledBack } from './stored-runs';

const database = useTestDatabase();
const url = () => database().url;

/** Labels of the steps run, in the order their handlers started. */
const ran: string[] = [];

/** A one-step workflow on a queue of its own, so each test sees only its own tasks. */
function onQueue(queue: string) {
  return defineWorkflow({
    name: `order-${queue}`,
    input: z.object({ label: z.string() }),
    steps: {
      only: step<{ label: string }>({
        queue,
        maxAttempts: 1,
        run: (ctx) => {
          ran.push(ctx.input.label);
          return { label: ctx.input.label };
        },
      }),
    },
  });
}

/** The planner's own choice (the ready index), and plans without index scans. */
const plans = ['as planned', 'without index scans'] as const;
type Plan = (typeof plans)[number];
const orderQueues = plans.flatMap((_, index) =>
  ['worker', 'one', 'full'].map((path) => `q-order-${path}-${index}`),
);
const queues = orderQueues;
const workflows = queues.map(onQueue);
const apply = () => ({
  definitions: workflowRegistry(workflows),
  leaseMs: 30_000,
  random: Math.random,
});

const engine = (): Engine => testEngine(url(), { workflows });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

afterEach(async () => {
  await setDatabaseClockOffset(url(), 0);
});

afterAll(async () => {
  await setDatabaseClockOffset(url(), 0);
});

/**
 * Delays (seconds) by label, in submission order: run_at order is b, d, e, a, c, which is
 * neither the insertion order nor (ids are time-ordered UUIDs) the id order.
 */
const delays = { a: 40, b: 10, c: 50, d: 20, e: 30 } as const;
const runAtOrder = ['b', 'd', 'e', 'a', 'c'];

/** Submits one workflow per label, one at a time (so created_at and id follow this order). */
async function submitDelayed(cw: Engine, queue: string): Promise<Map<string, string>> {
  const taskOf = new Map<string, string>();
  for (const [label, seconds] of Object.entries(delays)) {
    const { workflow } = await cw.submit(`order-${queue}`, { label }, { delayMs: seconds * 1_000 });
    const [task] = await query<{ id: string }>(
      url(),
      'select id from causeway_tasks where workflow_id = $1',
      [workflow.id],
    );
    taskOf.set(label, task?.id as string);
  }
  // What the test rests on: run_at order differs from insertion, created_at and id order.
  const labelOf = new Map([...taskOf].map(([label, id]) => [id, label]));
  const orderBy = async (column: string) =>
    (
      await query<{ id: string }>(
        url(),
        `select id from causeway_tasks where queue = $1 order by ${column}`,
        [queue],
      )
    ).map((row) => labelOf.get(row.id));
  const inserted = Object.keys(delays);
  expect(await orderBy('run_at')).toEqual(runAtOrder);
  expect(await orderBy('id')).toEqual(inserted);
  expect(await orderBy('created_at, id')).toEqual(inserted);
  return taskOf;
}

/** The labels of the lease_acquired rows of `queue`'s tasks, in log order. */
async function claimLog(queue: string, taskOf: ReadonlyMap<string, string>) {
  const labelOf = new Map([...taskOf].map(([label, id]) => [id, label]));
  const rows = await query<{ task_id: string }>(
    url(),
    `select l.task_id from causeway_transitions as l
       join causeway_tasks as t on t.id = l.task_id
      where t.queue = $1 and l.reason = 'lease_acquired' order by l.id`,
    [queue],
  );
  return rows.map((row) => labelOf.get(row.task_id));
}

/**
 * The ready index is in run_at order, so a plan that scans it hands out tasks in that order
 * whatever the statement says; without index scans the rows come in the order they are
 * stored (insertion order here), and only the statement's ORDER BY puts them in run_at order.
 */
async function usePlans(plan: Plan): Promise<void> {
  const setting = plan === 'without index scans' ? 'off' : 'default';
  for (const name of ['enable_indexscan', 'enable_indexonlyscan']) {
    await query(url(), `alter database ${database().name} set ${name} = ${setting}`);
  }
  // New sessions (every engine's pool here is new) start with it.
  const [row] = await query<{ on: string }>(
    url(),
    `select current_setting('enable_indexscan') as on`,
  );
  expect(row?.on).toBe(plan === 'without index scans' ? 'off' : 'on');
}

describe.each(plans.map((plan, index) => [plan, index] as const))(
  'claims take ready tasks in run_at order (R4, R8), %s',
  (plan, index) => {
    beforeAll(() => usePlans(plan));
    afterAll(() => usePlans('as planned'));

    it('a worker with one slot runs them in run_at order, not insertion or id order', async () => {
      const queue = `q-order-worker-${index}`;
      const cw = engine();
      const taskOf = await submitDelayed(cw, queue);
      // Every task is due once database time is a minute on.
      await setDatabaseClockOffset(url(), 60_000);
      ran.length = 0;
      const worker = await cw.startWorker({
        queues: [queue],
        concurrency: 1,
        prefetch: 0,
        claimBatchSize: 1,
        sweeper: false,
      });
      await waitFor(
        async () => {
          const [row] = await query<{ n: number }>(
            url(),
            `select count(*)::int as n from causeway_tasks where queue = $1 and state = 'succeeded'`,
            [queue],
          );
          return row?.n === runAtOrder.length;
        },
        { timeoutMs: 10_000, description: 'every task to succeed' },
      );
      await worker.stop();
      expect(ran).toEqual(runAtOrder);
      expect(await claimLog(queue, taskOf)).toEqual(runAtOrder);
    });

    it.each([
      ['one statement', 'one'],
      ['in full', 'full'],
    ] as const)('a claim %s: one task at a time, three, and all at once', async (path, name) => {
      const queue = `q-order-${name}-${index}`;
      const cw = engine();
      const taskOf = await submitDelayed(cw, queue);
      const labelOf = new Map([...taskOf].map(([label, id]) => [id, label]));
      const labels = (result: ClaimResult) => result.claimed.map((c) => labelOf.get(c.task.id));
      const claim = claimOf(path, cw, queue, apply);
      // Not due yet: nothing is claimed.
      expect(labels(await claim(cw.db, 10))).toEqual([]);
      await setDatabaseClockOffset(url(), 60_000);

      // One at a time (each claim sees the earlier ones' leases): the earliest run_at first.
      const oneByOne = await rolledBack(cw.db, async (tx) => {
        const order: (string | undefined)[] = [];
        for (let round = 0; round <= runAtOrder.length; round += 1) {
          order.push(...labels(await claim(tx, 1)));
        }
        return order;
      });
      expect(oneByOne).toEqual(runAtOrder);

      // Three of five: the three earliest.
      const three = await rolledBack(cw.db, async (tx) => labels(await claim(tx, 3)));
      expect(three).toEqual(runAtOrder.slice(0, 3));

      // All at once: handed over, and logged, in run_at order.
      const all = await claim(cw.db, 10);
      expect(labels(all)).toEqual(runAtOrder);
      expect(await claimLog(queue, taskOf)).toEqual(runAtOrder);
    });
  },
);
