/**
 * Which ready tasks a claim takes (R4, R8): the earliest `run_at` first, whatever order the
 * tasks were inserted in and whatever their ids; and a task is due when its `run_at` is at or
 * before the claim's own database time (`run_at <= now`), not a microsecond later.
 *
 * Both claim paths are checked: the one-statement claim (`claimReadyTasks`, what a worker
 * runs) and the full claim (`claimInFull`: `taskClaimLoad`, then the machine).
 */
import type { Engine } from '@causeway/engine';
import { defineWorkflow, step } from '@causeway/workflow';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { arrayLiteral } from '../../packages/engine/src/db/array-literal';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { claimInFull } from '../../packages/engine/src/runtime/claim/claim-in-full';
import { claimReadyTasks } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import type { ClaimResult } from '../../packages/engine/src/runtime/claim/claimed-task';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
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
const queues = [...orderQueues, 'q-edge-one', 'q-edge-full'];
const workflows = queues.map(onQueue);
const apply = () => ({
  definitions: new Map(workflows.map((definition) => [definition.name, definition])),
  leaseMs: 30_000,
  random: Math.random,
});

const engine = (): Engine => testEngine(url(), { workflows });

/** A parameter written into a statement's text as a literal. */
function literal(client: pg.Client, value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' || typeof value === 'bigint') return `(${value})`;
  if (typeof value === 'boolean') return String(value);
  if (value instanceof Date) return client.escapeLiteral(value.toISOString());
  if (Array.isArray(value)) return client.escapeLiteral(arrayLiteral(value));
  if (typeof value === 'object') return client.escapeLiteral(JSON.stringify(value));
  return client.escapeLiteral(String(value));
}

/**
 * A Kysely instance whose statements that read the claim's clock go to the server as simple
 * queries, their parameters written in as literals (the statements are the engine's own). A
 * simple query is one message: its time, statement_timestamp(), is when the server received
 * it, which pg_stat_activity shows as query_start while it waits. With the extended protocol
 * (what pg uses for a statement with parameters) the server takes the time again at each of
 * Parse, Bind and Execute, so a wait in an earlier one would leave the two apart.
 */
let simple: Kysely<CausewayDatabase> | null = null;
const simpleProtocol = () => simple as Kysely<CausewayDatabase>;

function simpleProtocolKysely(databaseUrl: string): Kysely<CausewayDatabase> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  pool.on('connect', (client) => {
    const send = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const [text, values] = args;
      if (
        typeof text === 'string' &&
        text.includes('causeway_statement_now') &&
        Array.isArray(values) &&
        values.length > 0
      ) {
        return send(
          text.replace(/\$(\d+)/g, (_, n: string) => literal(client, values[Number(n) - 1])),
        );
      }
      return send(...args);
    };
  });
  return new Kysely({ dialect: new PostgresDialect({ pool }) });
}

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
  simple = simpleProtocolKysely(url());
});

afterEach(async () => {
  await setDatabaseClockOffset(url(), 0);
});

afterAll(async () => {
  await simple?.destroy();
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

type Claim = (
  db: Kysely<CausewayDatabase> | Transaction<CausewayDatabase>,
  limit: number,
) => Promise<ClaimResult>;

type ClaimPath = 'one statement' | 'in full';

/** A claim of `queue` by the engine's holder on `db`: in one statement, or in full. */
function claimOf(path: ClaimPath, cw: Engine, queue: string): Claim {
  return (db, limit) => {
    const request = { queue, limit, holder: cw.holder };
    if (path === 'one statement') return claimReadyTasks(db, apply(), request);
    return db.isTransaction
      ? claimInFull(db as Transaction<CausewayDatabase>, apply(), request)
      : (db as Kysely<CausewayDatabase>)
          .transaction()
          .execute((tx) => claimInFull(tx, apply(), request));
  };
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
      const claim = claimOf(path, cw, queue);
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

/**
 * Makes one task's run_at exactly the claim's database time, and another's one millisecond
 * later. The test holds causeway_clock locked, so a claim started meanwhile has fixed its
 * statement time (its query_start) and waits to read the clock's offset. While it waits, both
 * run_at values are written from that query_start and the offset; once they commit, the claim
 * reads the new rows (a row changed since its snapshot is read again where it locks it) and
 * judges them by `run_at <= now` with the time it fixed.
 */
async function claimAtTheBoundary(
  cw: Engine,
  queue: string,
  claim: Claim,
): Promise<{ claimed: string[]; exact: string; later: string; now: string }> {
  const submitted = async (label: string) => {
    const { workflow } = await cw.submit(`order-${queue}`, { label });
    const [task] = await query<{ id: string }>(
      url(),
      'select id from causeway_tasks where workflow_id = $1',
      [workflow.id],
    );
    return task?.id as string;
  };
  const exact = await submitted('exact');
  const later = await submitted('later');
  // A connection to claim on, opened before the lock (a backend starting up waits for it).
  await sql`select 1`.execute(simpleProtocol());
  const locker = new pg.Client({ connectionString: url() });
  await locker.connect();
  try {
    await locker.query('begin');
    await locker.query('lock table causeway_clock in access exclusive mode');
    const claiming = claim(simpleProtocol(), 10);
    const blocked = await waitFor(
      async () => {
        // Within a transaction pg_stat_activity is read once and kept, unless cleared.
        await locker.query('select pg_stat_clear_snapshot()');
        const { rows } = await locker.query<{ pid: number }>(
          `select pid from pg_stat_activity
            where pg_backend_pid() = any(pg_blocking_pids(pid)) and query like '%causeway_statement_now%'`,
        );
        return rows.length === 1 ? rows[0] : undefined;
      },
      { description: 'the claim to wait for the clock' },
    );
    const { rows } = await locker.query<{ now: string; moved: string }>(
      `with moment as (
         select a.query_start + c.offset_ms * interval '1 millisecond' as now
         from pg_stat_activity as a, causeway_clock as c where a.pid = $1
       ), moved as (
         update causeway_tasks as t
         set run_at = m.now + case when t.id = $3 then interval '1 millisecond' else interval '0' end
         from moment as m where t.id in ($2, $3)
         returning t.id
       )
       select (select now from moment)::text as now, (select count(*) from moved) as moved`,
      [blocked.pid, exact, later],
    );
    expect(rows[0]?.moved).toBe('2');
    await locker.query('commit');
    const result = await claiming;
    return {
      claimed: result.claimed.map((c) => c.task.id),
      exact,
      later,
      now: rows[0]?.now as string,
    };
  } finally {
    await locker.end();
  }
}

describe('a task is due when run_at <= the claim time (R4)', () => {
  it.each([
    ['one statement', 'q-edge-one'],
    ['in full', 'q-edge-full'],
  ] as const)(
    'a claim %s takes run_at = now and leaves run_at = now + 1 ms',
    async (path, queue) => {
      const cw = engine();
      const claim = claimOf(path, cw, queue);
      const { claimed, exact, later, now } = await claimAtTheBoundary(cw, queue, claim);
      expect(claimed).toEqual([exact]);
      const rows = await query<{ id: string; state: string; run_at: string | null; at: string }>(
        url(),
        `select t.id, t.state, t.run_at::text as run_at, l.at::text as at
         from causeway_tasks as t
         left join causeway_transitions as l on l.task_id = t.id and l.reason = 'lease_acquired'
        where t.id in ($1, $2)`,
        [exact, later],
      );
      const byId = new Map(rows.map((row) => [row.id, row]));
      // The later task is still queued, due one millisecond after the claim's time.
      expect(byId.get(later)).toMatchObject({ state: 'queued', at: null });
      expect(byId.get(exact)?.state).toBe('leased');
      // The claim ran at the time the test read: it logged its edge then (the full claim at
      // that time in milliseconds, as it carries it in a JavaScript Date).
      const [check] = await query<{ gap: string; logged: string }>(
        url(),
        `select ($1::timestamptz - $2::timestamptz)::text as gap,
           (case when $4 then $2::timestamptz else date_trunc('milliseconds', $2::timestamptz)
            end)::text as logged, $3::text as at`,
        [byId.get(later)?.run_at, now, byId.get(exact)?.at, path === 'one statement'],
      );
      expect(check?.gap).toBe('00:00:00.001');
      expect(byId.get(exact)?.at).toBe(check?.logged);
    },
  );
});
