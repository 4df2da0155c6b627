/**
 * The one-statement settle of child workflows' results (R45): a result that ends a child only
 * counts into the tally of the step awaiting it, in the statement, while a child stays open;
 * whatever may settle the step is left to the full decision. Differential, as
 * settle-statement.property.test.ts: random reachable children (the stored-runs shapes) of one
 * or two awaiting steps, with tallies that agree with them, and a random batch of results,
 * written as the worker's resultWriter writes them (the statement, then the rest in full) and by
 * the full decision alone, in rolled-back transactions over the same rows: the outcomes, the
 * task rows (the tallies among them), the workflow rows and the log must be the same. Then a
 * race: a child ends elsewhere between the statement's snapshot and its update of the tally,
 * which would now count the last child; the statement writes nothing and the full decision
 * settles the step.
 */
import { defineWorkflow, step, workflowRegistry } from '@causeway/workflow/internal';
import fc from 'fast-check';
import { sql, type Transaction } from 'kysely';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isSelfCheckFailure } from '../../packages/engine/src/db/pg-errors';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { applyEvents } from '../../packages/engine/src/runtime/decision/apply-events';
import type { EventRequest } from '../../packages/engine/src/runtime/decision/event-request';
import { settleInOneStatement } from '../../packages/engine/src/runtime/settle/one-statement-settle';
import { waitFor } from '../helpers/wait-for';
import {
  holder,
  plainOutcome,
  rolledBack,
  rowsAfter,
  settleStamp,
  shapes,
  store,
  useStoredRunsDatabase,
  workerResult,
  workflowSpec,
} from './stored-runs';

const opened = useStoredRunsDatabase();

/** The parent: its step `fan` awaits the children; `after` runs once it succeeds. */
const fanParent = defineWorkflow({
  name: 'fast-path-fan',
  input: z.object({}),
  steps: {
    fan: step({ run: () => null }),
    after: step({ after: ['fan'], run: () => null }),
  },
});
const definitions = workflowRegistry([...shapes, fanParent]);
const apply = { definitions, leaseMs: 30_000, random: () => 0.5 };
const failedStates = ['dead', 'cancelled'];

const parentSpec = fc.record({
  /** Failures the step tolerates. */
  allowed: fc.integer({ min: 0, max: 2 }),
  /** Asked to cancel while it awaits (R46), sometimes. */
  cancelling: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  /**
   * Sometimes far from its end: a thousand more children, open (not stored: no result here
   * reaches them), so the statement reads the step's room without locking its row.
   */
  moreOpen: fc.integer({ min: 0, max: 2 }).map((n) => (n === 0 ? 1_000 : 0)),
});

const oneStep = shapes.findIndex((shape) => shape.steps.length === 1);
const childSpec = fc.record({
  /**
   * Mostly a child whose next step this worker has just leased, often its last (a one-step
   * child, or the others run), so that its result ends it; else any reachable state.
   */
  run: fc.tuple(workflowSpec, fc.integer({ min: 0, max: 5 })).map(([spec, n]) =>
    n === 0
      ? // Children are of workflows this engine defines: it started them.
        { ...spec, foreign: false }
      : {
          ...spec,
          ...(n <= 2 ? { definition: oneStep } : { advance: 3 }),
          claimNext: true,
          ours: true,
          expired: false,
          foreign: false,
          events: [],
        },
  ),
  /** Mostly awaited; sometimes detached (never counted). */
  detached: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
  /** A failed child set aside by a replay (R47), sometimes. */
  replaced: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
});

const resultSpec = fc.record({
  pick: fc.nat(),
  fails: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
  staleEpoch: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
});

/** Parent rows of each step: `fast-path-fan` with `fan` awaiting and `after` pending. */
const parentIds = (index: number) => ({
  workflowId: `00000000-0000-4000-9000-00000000000${index}`,
  fanId: `00000000-0000-4000-9100-00000000000${index}`,
  afterId: `00000000-0000-4000-9200-00000000000${index}`,
});

/** A parent workflow `fast-path-fan` whose step `fan` is in `fan` with this tally. */
async function insertParent(
  index: number,
  tally: {
    readonly fan: string;
    readonly workflow: string;
    readonly total: number;
    readonly succeeded: number;
    readonly failed: number;
    readonly allowed: number;
  },
): Promise<void> {
  const ids = parentIds(index);
  const after = tally.fan === 'succeeded' ? 'queued' : 'pending';
  const db = opened().db;
  await sql`insert into causeway_workflows (id, name, state, input, created_at, updated_at)
    values (${ids.workflowId}, ${fanParent.name}, ${tally.workflow}, '{}'::jsonb,
      now() - interval '1 day', now() - interval '1 day')`.execute(db);
  await sql`insert into causeway_tasks (id, workflow_id, step, queue, state, attempt,
      max_attempts, run_at, output, children_total, children_succeeded, children_failed,
      children_allowed_failures, children_output, created_at, updated_at)
    values (${ids.fanId}, ${ids.workflowId}, 'fan', 'default', ${tally.fan}, 1, 3, null,
        ${tally.fan === 'succeeded' ? '[]' : null}::jsonb, ${tally.total}, ${tally.succeeded},
        ${tally.failed}, ${tally.allowed}, 'outcome', now() - interval '1 day',
        now() - interval '1 day'),
      (${ids.afterId}, ${ids.workflowId}, 'after', 'default', ${after}, 0, 3,
        ${after === 'queued' ? sql`now()` : null}, null, null, null, null, null, null,
        now() - interval '1 day', now() - interval '1 day')`.execute(db);
}

/**
 * The children stored by `store` made children of one or two parents (in turn), and each
 * parent's step with the tally its children give (R45): dead past its tolerance, succeeded
 * when none is open, else awaiting them or asked to cancel.
 */
async function storeFamily(
  children: readonly (typeof childSpec extends fc.Arbitrary<infer T> ? T : never)[],
  parents: readonly (typeof parentSpec extends fc.Arbitrary<infer T> ? T : never)[],
): Promise<void> {
  const { db } = opened();
  await store(
    db,
    children.map((child) => child.run),
  );
  const { rows: stored } = await sql<{ id: string; state: string }>`
    select id, state from causeway_workflows order by id`.execute(db);
  for (const [index, parent] of parents.entries()) {
    const ids = parentIds(index);
    const mine = stored.filter((_, position) => position % parents.length === index);
    const links = mine.map((row, position) => {
      const child = children[stored.indexOf(row)];
      const replaced =
        !child?.detached && child?.replaced === true && failedStates.includes(row.state);
      return { ...row, position, detached: child?.detached === true, replaced };
    });
    const counted = links.filter((link) => !link.detached && !link.replaced);
    const succeeded = counted.filter((link) => link.state === 'succeeded').length;
    const failed = counted.filter((link) => failedStates.includes(link.state)).length;
    const open = counted.length + parent.moreOpen - succeeded - failed;
    const fan =
      failed > parent.allowed
        ? 'dead'
        : open === 0
          ? 'succeeded'
          : parent.cancelling
            ? 'cancel_requested'
            : 'awaiting_children';
    const workflow = { dead: 'dead', succeeded: 'running', cancel_requested: 'cancel_requested' }[
      fan as 'dead'
    ];
    await insertParent(index, {
      fan,
      workflow: workflow ?? 'running',
      total: counted.length + parent.moreOpen,
      succeeded,
      failed,
      allowed: parent.allowed,
    });
    for (const link of links) {
      await sql`update causeway_workflows set parent_workflow_id = ${ids.workflowId},
          parent_task_id = ${ids.fanId}, child_index = ${link.position},
          root_workflow_id = ${ids.workflowId}, depth = 1, detached = ${link.detached},
          replaced = ${link.replaced}
        where id = ${link.id}`.execute(db);
    }
  }
}

/** The batch a worker would send for the children's leased tasks. */
async function resultsFor(
  specs: readonly (typeof resultSpec extends fc.Arbitrary<infer T> ? T : never)[],
): Promise<EventRequest[]> {
  const { rows: tasks } = await sql<{
    id: string;
    workflow_id: string;
    lease_epoch: string;
    state: string;
    step: string;
    name: string;
  }>`select t.id, t.workflow_id, t.lease_epoch, t.state, t.step, w.name
       from causeway_tasks as t join causeway_workflows as w on w.id = t.workflow_id
      where w.parent_task_id is not null and t.state in ('leased', 'cancel_requested')
      order by t.id`.execute(opened().db);
  const requests: EventRequest[] = [];
  for (const [index, spec] of specs.entries()) {
    const task = tasks[spec.pick % Math.max(1, tasks.length)];
    if (task === undefined || requests.some((request) => request.taskId === task.id)) continue;
    requests.push(workerResult(task, task, { ...spec, output: { child: index } }));
  }
  return requests;
}

/** The steps' tallies of succeeded children, in id order. */
async function talliesIn(tx: Transaction<CausewayDatabase>): Promise<number[]> {
  const { rows } = await sql<{ succeeded: number }>`select children_succeeded as succeeded
    from causeway_tasks where children_total is not null order by id`.execute(tx);
  return rows.map((row) => row.succeeded);
}

/** Each workflow's log in its order (across workflows the two ways may interleave differently). */
const byWorkflow = (rows: Awaited<ReturnType<typeof rowsAfter>>) => ({
  ...rows,
  log: [...rows.log].sort((a, b) => String(a.workflow_id).localeCompare(String(b.workflow_id))),
});

describe("the one-statement settle of child workflows' results", () => {
  it('writes what the full decision writes, counting each child into its step once', async () => {
    let childrenInOneStatement = 0;
    let tallyMovedInOneStatement = 0;
    let stepsSettled = 0;
    let childrenInFull = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(childSpec, { minLength: 1, maxLength: 8 }),
        fc.array(parentSpec, { minLength: 1, maxLength: 2 }),
        fc.array(resultSpec, { minLength: 1, maxLength: 6 }),
        async (children, parents, results) => {
          await storeFamily(children, parents);
          const requests = await resultsFor(results);
          if (requests.length === 0) return;
          const fast = await rolledBack(opened().db, async (tx) => {
            const before = await talliesIn(tx);
            const { decided } = await settleInOneStatement(tx, apply, requests);
            const afterStatement = await talliesIn(tx);
            const rest = requests.filter((request) => !decided.has(request));
            const full = rest.length === 0 ? [] : (await applyEvents(tx, apply, rest)).outcomes;
            return {
              outcomes: requests.map(
                (request) => decided.get(request) ?? full[rest.indexOf(request)],
              ),
              decided: decided.size,
              moved: JSON.stringify(before) !== JSON.stringify(afterStatement),
              rows: await rowsAfter(tx, settleStamp),
            };
          });
          const full = await rolledBack(opened().db, async (tx) => {
            const applied = await applyEvents(tx, apply, requests);
            return { outcomes: applied.outcomes, rows: await rowsAfter(tx, settleStamp) };
          });
          expect(plainOutcome(fast.outcomes)).toEqual(plainOutcome(full.outcomes));
          expect(plainOutcome(byWorkflow(fast.rows))).toEqual(plainOutcome(byWorkflow(full.rows)));
          childrenInOneStatement += fast.decided;
          childrenInFull += requests.length - fast.decided;
          if (fast.moved) tallyMovedInOneStatement += 1;
          stepsSettled += full.rows.log.filter((row) =>
            ['children_succeeded', 'children_failed', 'children_cancelled'].includes(
              String(row.reason),
            ),
          ).length;
        },
      ),
      { numRuns: 300 },
    );
    console.info(
      `[children-settle-statement] ${childrenInOneStatement} child results in one statement (${tallyMovedInOneStatement} batches moved a tally there), ${childrenInFull} in full; ${stepsSettled} steps settled`,
    );
    // Every branch reached: results counted in the statement, and steps settled in full.
    expect(childrenInOneStatement).toBeGreaterThan(40);
    expect(tallyMovedInOneStatement).toBeGreaterThan(15);
    expect(childrenInFull).toBeGreaterThan(40);
    expect(stepsSettled).toBeGreaterThan(10);
  }, 180_000);

  // The first child's result while the others end elsewhere, in a transaction that holds the
  // step's row: near the step's end the statement waits for the row and reads it at its latest;
  // far from it, its snapshot's room is gone by its update, which then matches nothing.
  it("near the step's end, waits for its row and leaves a result that would end the last child", async () => {
    const answer = await resultWhileOthersEnd(2, 1);
    expect(answer.error).toBeNull();
    expect(answer.settled?.decided.size).toBe(0);
    await expectSettledInFull(2);
  });

  it("near the step's end, takes the step's row before its children's, as a cancel of its workflow does", async () => {
    const { db, pool } = opened();
    const ids = await storeWideStep(2);
    // A cancel holds the parent workflow and its step (it would next ask the children).
    const cancel = await pool.connect();
    try {
      await cancel.query('begin');
      await cancel.query(
        `select 1 from causeway_workflows as w join causeway_tasks as t on t.workflow_id = w.id
          where w.id = $1 for update of w, t`,
        [ids.workflowId],
      );
      const statement = settleInOneStatement(db, apply, [firstChildResult]);
      await untilALockIsAwaited();
      // The statement waits for the step and holds no child: the cancel takes the children.
      await cancel.query("set local lock_timeout = '2s'");
      const { rowCount } = await cancel.query(
        'select 1 from causeway_workflows where parent_task_id = $1 for update',
        [ids.fanId],
      );
      expect(rowCount).toBe(2);
      await cancel.query('commit');
      expect((await statement).decided.size).toBe(1);
    } finally {
      cancel.release();
    }
  });

  it('far from it, writes nothing when its update finds the room gone (the full decision settles)', async () => {
    const answer = await resultWhileOthersEnd(1_002, 1_001);
    expect(answer.settled).toBeNull();
    expect(isSelfCheckFailure(answer.error)).toBe(true);
    await expectSettledInFull(1_002);
  });
});

const single = shapes.find((shape) => shape.steps.length === 1);
const childId = (prefix: string) =>
  `('00000000-0000-4000-${prefix}-' || lpad(to_hex(i), 12, '0'))::uuid`;
const firstChild = {
  workflowId: '00000000-0000-4000-9300-000000000000',
  taskId: '00000000-0000-4000-9400-000000000000',
};

/** Until a backend of this database waits for a lock (the statement under test, for a row). */
async function untilALockIsAwaited(): Promise<void> {
  await waitFor(async () => {
    const { rows } = await opened().pool.query(
      `select 1 from pg_stat_activity
        where wait_event_type = 'Lock' and datname = current_database()`,
    );
    return rows.length > 0;
  });
}

/** This worker's completion of the first child. */
const firstChildResult: EventRequest = {
  taskId: firstChild.taskId,
  workflowId: firstChild.workflowId,
  event: { type: 'complete', actor: { kind: 'worker', name: holder } },
  fence: { taskId: firstChild.taskId, holder, epoch: 1 },
  extra: { outputJson: '0' },
};

/** A step awaiting `width` one-step children, each leased by this worker. */
async function storeWideStep(width: number): Promise<ReturnType<typeof parentIds>> {
  const { db } = opened();
  const only = single?.steps[0];
  if (single === undefined || only === undefined) throw new Error('no one-step shape');
  await store(db, []);
  const ids = parentIds(0);
  await insertParent(0, {
    fan: 'awaiting_children',
    workflow: 'running',
    total: width,
    succeeded: 0,
    failed: 0,
    allowed: 0,
  });
  await sql`insert into causeway_workflows (id, name, state, input, parent_workflow_id,
      parent_task_id, child_index, root_workflow_id, depth, created_at, updated_at)
    select ${sql.raw(childId('9300'))}, ${single.name}, 'running', '{"n":1}'::jsonb,
      ${ids.workflowId}, ${ids.fanId}, i, ${ids.workflowId}, 1, now(), now()
    from generate_series(0, ${width - 1}::integer) as i`.execute(db);
  await sql`insert into causeway_tasks (id, workflow_id, step, queue, state, attempt,
      max_attempts, lease_holder, lease_epoch, lease_expires_at, created_at, updated_at)
    select ${sql.raw(childId('9400'))}, ${sql.raw(childId('9300'))}, ${only.name}, ${only.queue},
      'leased', 1, ${only.policy.maxAttempts}, ${holder}, 1, now() + interval '1 hour', now(), now()
    from generate_series(0, ${width - 1}::integer) as i`.execute(db);
  return ids;
}

/**
 * A step awaiting `width` one-step children, all leased by this worker; the first child's
 * result written by the statement while, in another transaction holding the step's row, the
 * next `ending` children end and are counted.
 */
async function resultWhileOthersEnd(
  width: number,
  ending: number,
): Promise<{ settled: Awaited<ReturnType<typeof settleInOneStatement>> | null; error: unknown }> {
  const { db, pool } = opened();
  const ids = await storeWideStep(width);
  const elsewhere = await pool.connect();
  try {
    await elsewhere.query('begin');
    await elsewhere.query(
      `update causeway_tasks set state = 'succeeded', output = '1'::jsonb, lease_holder = null,
         lease_expires_at = null
       where workflow_id in (select id from causeway_workflows
         where parent_task_id = $1 and child_index between 1 and $2)`,
      [ids.fanId, ending],
    );
    await elsewhere.query(
      `update causeway_workflows set state = 'succeeded'
        where parent_task_id = $1 and child_index between 1 and $2`,
      [ids.fanId, ending],
    );
    await elsewhere.query('update causeway_tasks set children_succeeded = $2 where id = $1', [
      ids.fanId,
      ending,
    ]);
    // The statement's snapshot has none of them: it waits for the step's row.
    const statement = settleInOneStatement(db, apply, [firstChildResult]).then(
      (settled) => ({ settled, error: null }),
      (error: unknown) => ({ settled: null, error }),
    );
    await untilALockIsAwaited();
    await elsewhere.query('commit');
    return await statement;
  } finally {
    elsewhere.release();
  }
}

/** Nothing of the statement stayed; the full decision counts the last child and settles the step. */
async function expectSettledInFull(width: number): Promise<void> {
  const { db } = opened();
  const ids = parentIds(0);
  const { rows: before } = await sql<{ state: string; children_succeeded: number }>`
    select state, children_succeeded from causeway_tasks
    where id in (${firstChild.taskId}, ${ids.fanId}) order by id`.execute(db);
  expect(before.map((row) => [row.state, row.children_succeeded])).toEqual([
    ['awaiting_children', width - 1],
    ['leased', null],
  ]);
  const applied = await db
    .transaction()
    .execute((tx) => applyEvents(tx, apply, [firstChildResult]));
  expect(applied.outcomes[0]).toMatchObject({ kind: 'applied', edge: { to: 'succeeded' } });
  const { rows: after } = await sql<{ state: string; children_succeeded: number; output: unknown }>`
    select state, children_succeeded, output from causeway_tasks where id = ${ids.fanId}`.execute(
    db,
  );
  expect(after[0]).toMatchObject({ state: 'succeeded', children_succeeded: width });
  const outcomes = (after[0]?.output ?? []) as { state: string }[];
  expect(outcomes.length).toBe(width);
  expect(outcomes.every((outcome) => outcome.state === 'succeeded')).toBe(true);
}
