/**
 * A task is due when its `run_at` is at or before the claim's own database time (R4):
 * `run_at <= now`, not a microsecond later, where the claim's time is read once it runs, after
 * its snapshot (`causeway_clock_now`), and is the time its lease edges carry. Both claim
 * paths: the one-statement claim (`claimReadyTasks`) and the full claim (`claimInFull`).
 */
import type { Engine } from '@causeway/engine';
import { defineWorkflow, step } from '@causeway/workflow';
import { workflowRegistry } from '@causeway/workflow/internal';
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { type Claim, type ClaimPath, claimOf } from './claim-paths';

const database = useTestDatabase();
const url = () => database().url;

const workflows = ['q-edge-one', 'q-edge-full'].map((queue) =>
  defineWorkflow({
    name: `order-${queue}`,
    input: z.object({ label: z.string() }),
    steps: { only: step({ queue, maxAttempts: 1, run: () => null }) },
  }),
);
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

afterEach(() => setDatabaseClockOffset(url(), 0));

/** Tasks laid out one microsecond apart, and how many a claim took with its time. */
interface Boundary {
  /** Task ids in run_at order, one microsecond apart. */
  readonly ids: readonly string[];
  readonly runAt: ReadonlyMap<string, string>;
  readonly claimed: ReadonlySet<string>;
  /** The claim's time: its lease edges' `at` (null: it took none). */
  readonly at: string | null;
  /** Microseconds from the first task's run_at to the claim's time. */
  readonly lateUs: number;
  /** The run_at values were written after the first of them (a loaded machine): no boundary. */
  readonly placedLate: boolean;
}

/**
 * Where tasks' run_at go, in microseconds after a whole millisecond a little ahead. The claim
 * in one statement has its time to the microsecond: 4 ms of tasks, one microsecond apart,
 * from the moment the claim is let go. The full claim's time is a whole millisecond: tasks
 * a microsecond either side of each of the next 100.
 */
const boundaryLayouts: Record<ClaimPath, readonly number[]> = {
  'one statement': Array.from({ length: 4_000 }, (_, n) => n),
  'in full': Array.from({ length: 100 }, (_, k) =>
    [-1, 0, 1].map((d) => (k + 1) * 1_000 + d),
  ).flat(),
};

/**
 * Lays due tasks' run_at (`boundaryLayouts`) from a moment a little ahead, while a claim that
 * saw them due waits, then lets it go at the first. The claim reads its
 * clock (causeway_clock_now) once it runs, after its snapshot; the test holds causeway_clock
 * locked, so a claim started meanwhile waits to read it. Another connection writes the run_at
 * values and commits; the claim reads the new rows (a row changed since its snapshot is read
 * again where it locks it) and judges them by `run_at <= now`. The lock is let go when the
 * database's clock is `leadUs` before the first run_at: the claim's time falls among the
 * tasks unless it woke sooner or later than that.
 */
async function claimAtTheBoundary(
  cw: Engine,
  queue: string,
  claim: Claim,
  layout: readonly number[],
  leadUs: number,
  marginMs: number,
): Promise<Boundary> {
  const submitted = await cw.submitMany(
    layout.map((_, n) => ({
      name: `order-${queue}`,
      input: { label: `b${n}` },
    })),
  );
  const workflowIds = submitted.map((result) => result.workflow.id);
  const locker = new pg.Client({ connectionString: url() });
  await locker.connect();
  try {
    await locker.query('begin');
    await locker.query('lock table causeway_clock in access exclusive mode');
    const { rows: clock } = await locker.query<{ offset_ms: number }>(
      'select offset_ms from causeway_clock',
    );
    const offsetMs = clock[0]?.offset_ms ?? 0;
    const claiming = claim(cw.db, 2 * layout.length);
    await waitFor(
      async () => {
        // Within a transaction pg_stat_activity is read once and kept, unless cleared.
        await locker.query('select pg_stat_clear_snapshot()');
        const { rows } = await locker.query(
          `select pid from pg_stat_activity
            where pg_backend_pid() = any(pg_blocking_pids(pid)) and query like '%causeway_clock_now%'`,
        );
        return rows.length === 1;
      },
      { description: 'the claim to wait for the clock' },
    );
    // What the claim judges them by (it clears run_at when it leases a task), from `marginMs`
    // on: time enough for this to commit, unless the machine is loaded (then the round is
    // laid again with a wider margin).
    const placed = await query<{ id: string; n: string; run_at: string }>(
      url(),
      `with base as materialized (
         select date_trunc('milliseconds',
           clock_timestamp() + ($2::integer + $4::integer) * interval '1 millisecond') as at
       ),
       placed as (
         select t.id, row_number() over (order by t.id) - 1 as n
         from causeway_tasks as t where t.workflow_id = any($1::uuid[])
       )
       update causeway_tasks as t
       set run_at = b.at + ($3::integer[])[p.n + 1] * interval '1 microsecond'
       from placed as p, base as b where t.id = p.id
       returning t.id, p.n, t.run_at::text as run_at`,
      [workflowIds, offsetMs, layout, marginMs],
    );
    expect(placed).toHaveLength(layout.length);
    const first = placed.find((row) => Number(row.n) === 0)?.run_at;
    const [waited] = await query<{ late: boolean }>(
      url(),
      `select clock_timestamp() + $2::integer * interval '1 millisecond' > $1::timestamptz as late`,
      [first, offsetMs],
    );
    await locker.query(
      `select pg_sleep(extract(epoch from $1::timestamptz - $3::integer * interval '1 microsecond'
         - (clock_timestamp() + $2::integer * interval '1 millisecond')))`,
      [first, offsetMs, Math.round(leadUs)],
    );
    await locker.query('commit');
    const result = await claiming;
    const leases = await query<{ at: string; late_us: number }>(
      url(),
      `select distinct l.at::text as at,
         extract(epoch from l.at - $2::timestamptz)::float8 * 1e6 as late_us
       from causeway_transitions as l
       join causeway_tasks as t on t.id = l.task_id
       where t.workflow_id = any($1::uuid[]) and l.reason = 'lease_acquired'`,
      [workflowIds, first],
    );
    expect(leases.length, 'one claim, one time').toBeLessThanOrEqual(1);
    const ids = [...placed].sort((a, b) => Number(a.n) - Number(b.n)).map((row) => row.id);
    return {
      ids,
      runAt: new Map(placed.map((row) => [row.id, row.run_at])),
      claimed: new Set(result.claimed.map((c) => c.task.id)),
      at: leases[0]?.at ?? null,
      lateUs: leases[0]?.late_us ?? Number.NEGATIVE_INFINITY,
      placedLate: waited?.late === true,
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
    'a claim %s takes every task with run_at <= its time, and none a microsecond later',
    async (path, queue) => {
      const cw = engine();
      const claim = claimOf(path, cw, queue, apply);
      // A claim may wake sooner or later than the test guessed, and its time fall before or
      // after every task: then the boundary is laid again, let go as early as the last claim
      // was late past the layout's middle.
      const layout = boundaryLayouts[path];
      const middleUs = ((layout.at(-1) as number) - (layout[0] as number)) / 2;
      let boundary: Boundary | undefined;
      let leadUs = 0;
      let marginMs = 300;
      const tried: string[] = [];
      for (let round = 0; round < 8; round += 1) {
        const laid = await claimAtTheBoundary(cw, queue, claim, layout, leadUs, marginMs);
        tried.push(
          `${laid.claimed.size} of ${laid.ids.length} at ${laid.at}, lead ${leadUs} µs${laid.placedLate ? `, placed after their time (margin ${marginMs} ms)` : ''}`,
        );
        if (laid.at !== null) {
          const due = await query<{ id: string }>(
            url(),
            `select id from unnest($1::uuid[], $2::timestamptz[]) as p(id, run_at)
             where p.run_at <= $3::timestamptz`,
            [laid.ids, laid.ids.map((id) => laid.runAt.get(id)), laid.at],
          );
          // Taken exactly when due by the claim's logged time, among the tasks or not.
          expect([...laid.claimed].sort()).toEqual(due.map((row) => row.id).sort());
        }
        if (!laid.placedLate && laid.claimed.size > 0 && laid.claimed.size < laid.ids.length) {
          boundary = laid;
          break;
        }
        if (laid.placedLate) marginMs *= 2;
        else
          leadUs =
            laid.at === null
              ? leadUs / 2
              : Math.max(0, Math.round(leadUs + laid.lateUs - middleUs));
        // Not due again: the next round's claim sees only its own tasks.
        await query(
          url(),
          `update causeway_tasks set run_at = run_at + interval '1 day' where id = any($1::uuid[])`,
          [laid.ids],
        );
      }
      expect(
        boundary,
        `a claim time among the tasks in 8 rounds: ${tried.join('; ')}`,
      ).toBeDefined();
      const { ids, runAt, claimed, at } = boundary as Boundary;
      // The last task taken is due exactly at the claim's time (in full, the millisecond it
      // rounds up to), the next one a microsecond later.
      const last = ids[claimed.size - 1] as string;
      const next = ids[claimed.size] as string;
      expect(claimed.has(last) && !claimed.has(next)).toBe(true);
      const [gaps] = await query<{ last: string; next: string }>(
        url(),
        `select ($2::timestamptz - $1::timestamptz)::text as last,
           ($3::timestamptz - $1::timestamptz)::text as next`,
        [at, runAt.get(last), runAt.get(next)],
      );
      expect(gaps).toEqual({ last: '00:00:00', next: '00:00:00.000001' });
    },
  );
});
