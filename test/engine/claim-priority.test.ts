/**
 * Priority (R49): among due tasks of a queue, claims take the smallest `run_at − priority`
 * first, never a task before its `run_at`; a priority out of range is refused and writes
 * nothing. Both claim paths are checked: the one-statement claim and the full claim.
 */
import { type Engine, EngineError } from '@causeway/engine';
import { DefinitionError, defineWorkflow, step } from '@causeway/workflow';
import { workflowRegistry } from '@causeway/workflow/internal';
import fc from 'fast-check';
import { type Kysely, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { claimStatement } from '../../packages/engine/src/db/claim/claim-statement';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { claimInFull } from '../../packages/engine/src/runtime/claim/claim-in-full';
import {
  claimReadyTasks,
  claimStatementPlan,
} from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { explainNodes, type PlanNode, planNodes } from '../helpers/query-plans';
import { waitFor } from '../helpers/wait-for';
import { tableCounts } from './semantics-support';
import { rolledBack } from './stored-runs';

const database = useTestDatabase();
const url = () => database().url;

const queue = 'q-priority';
const plain = defineWorkflow({
  name: 'priority-plain',
  input: z.object({ label: z.string() }),
  steps: { only: step({ queue, maxAttempts: 1, run: () => null }) },
});
const urgent = defineWorkflow({
  name: 'priority-step',
  input: z.object({ label: z.string() }),
  steps: { only: step({ queue, priority: 600, maxAttempts: 1, run: () => null }) },
});
const explained = defineWorkflow({
  name: 'priority-explained',
  input: z.object({ label: z.string() }),
  steps: { only: step({ queue: 'q-priority-explain', maxAttempts: 1, run: () => null }) },
});
const workflows = [plain, urgent, explained];
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

type Path = 'one statement' | 'in full';
const paths: readonly Path[] = ['one statement', 'in full'];

async function claimOne(cw: Engine, tx: Transaction<CausewayDatabase>, path: Path) {
  const request = { queue, limit: 1, holder: cw.holder };
  const result =
    path === 'one statement'
      ? await claimReadyTasks(tx, apply(), request)
      : await claimInFull(tx, apply(), request);
  return result.claimed.map((claimed) => claimed.task.id);
}

interface Planned {
  readonly delaySeconds: number;
  readonly priority?: number;
  readonly workflow?: string;
}

/**
 * Submits `planned` in `tx` (one submit each, all at the transaction's database time), then
 * moves the database clock a minute on in the same transaction: a task delayed under 60 s is
 * due, one delayed more is not. Returns the task ids in planned order.
 */
async function submitThenWait(
  cw: Engine,
  tx: Transaction<CausewayDatabase>,
  planned: readonly Planned[],
): Promise<string[]> {
  const ids: string[] = [];
  for (const [index, item] of planned.entries()) {
    const { workflow } = await cw.submit(
      item.workflow ?? plain.name,
      { label: String(index) },
      {
        transaction: tx,
        delayMs: item.delaySeconds * 1_000,
        ...(item.priority === undefined ? {} : { priority: item.priority }),
      },
    );
    const { rows } = await sql<{ id: string }>`
      select id from causeway_tasks where workflow_id = ${workflow.id}`.execute(tx);
    ids.push(rows[0]?.id as string);
  }
  await sql`update causeway_clock set offset_ms = offset_ms + 60000`.execute(tx);
  return ids;
}

/** Claims one task at a time until none is left: the ids in claim order. */
async function drain(cw: Engine, tx: Transaction<CausewayDatabase>, path: Path) {
  const order: string[] = [];
  for (;;) {
    const claimed = await claimOne(cw, tx, path);
    if (claimed.length === 0) return order;
    order.push(...claimed);
  }
}

/**
 * Submits `planned`, waits a minute and drains the queue by `path`, all rolled back: the
 * planned positions in claim order. `inside` looks at the rows before the claims.
 */
async function claimOrder(
  cw: Engine,
  path: Path,
  planned: readonly Planned[],
  inside: (
    tx: Transaction<CausewayDatabase>,
    ids: readonly string[],
  ) => Promise<void> = async () => {},
) {
  return rolledBack(cw.db as Kysely<CausewayDatabase>, async (tx) => {
    const ids = await submitThenWait(cw, tx, planned);
    await inside(tx, ids);
    const label = new Map(ids.map((id, index) => [id, index]));
    return (await drain(cw, tx, path)).map((id) => label.get(id));
  });
}

describe.each(paths)('a claim %s orders due tasks by run_at − priority (R49)', (path) => {
  it('a later task goes first only when its run_at minus its priority is earlier', async () => {
    const cw = engine();
    const order = await claimOrder(cw, path, [
      { delaySeconds: 0 }, // older: run_at t
      { delaySeconds: 30, priority: 20 }, // t + 10: behind the older one
      { delaySeconds: 40, priority: 50 }, // t − 10: ahead of it
      { delaySeconds: 10, priority: -30 }, // t + 40: behind even later plain work
      { delaySeconds: 20 }, // t + 20
      { delaySeconds: 59, workflow: urgent.name }, // the step's 600 s: t − 541, first
    ]);
    expect(order).toEqual([5, 2, 0, 1, 4, 3]);
    await cw.close();
  });

  it('never claims a task before its run_at, whatever its priority', async () => {
    const cw = engine();
    const order = await claimOrder(cw, path, [
      { delaySeconds: 50 },
      { delaySeconds: 61, priority: 86_400 },
      { delaySeconds: 120, workflow: urgent.name },
    ]);
    expect(order).toEqual([0]);
    await cw.close();
  });

  it('a submit’s priority wins over its step’s', async () => {
    const cw = engine();
    const order = await claimOrder(
      cw,
      path,
      [
        { delaySeconds: 10 },
        { delaySeconds: 0, workflow: urgent.name, priority: -30 }, // t + 30, not t − 600
      ],
      async (tx, ids) => {
        const stored = await sql<{ priority: number }>`
          select priority from causeway_tasks where id = ${ids[1]}`.execute(tx);
        expect(stored.rows[0]?.priority).toBe(-30);
      },
    );
    expect(order).toEqual([0, 1]);
    await cw.close();
  });
});

const plannedTask = fc.record({
  // Whole seconds, never 60: the one-minute clock move leaves no task at the boundary.
  delaySeconds: fc.integer({ min: 0, max: 119 }).filter((seconds) => seconds !== 60),
  priority: fc.oneof(
    fc.constant(0),
    fc.integer({ min: -120, max: 120 }),
    fc.integer({ min: -86_400, max: 86_400 }),
  ),
});

describe.each(paths)('a model of the claim %s (R49)', (path) => {
  it('takes every due task and no other, each the smallest run_at − priority left', async () => {
    const cw = engine();
    await fc.assert(
      fc.asyncProperty(fc.array(plannedTask, { minLength: 1, maxLength: 8 }), async (planned) => {
        const { order, expected } = await rolledBack(
          cw.db as Kysely<CausewayDatabase>,
          async (tx) => {
            const ids = await submitThenWait(cw, tx, planned);
            const key = new Map(
              ids.map((id, index) => {
                const item = planned[index] as Planned;
                return [id, item.delaySeconds - (item.priority ?? 0)];
              }),
            );
            const due = ids.filter((_, index) => (planned[index] as Planned).delaySeconds < 60);
            const drained = await drain(cw, tx, path);
            return {
              order: drained.map((id) => key.get(id)),
              expected: due.map((id) => key.get(id) as number).sort((a, b) => a - b),
            };
          },
        );
        // Ties may go either way; the keys claimed, in order, are the due tasks' keys sorted.
        expect(order).toEqual(expected);
      }),
      { numRuns: 25 },
    );
    await cw.close();
  });
});

describe('a priority out of range is refused (R49)', () => {
  it('at definition load, with every problem named', () => {
    for (const priority of [86_401, -86_401, 1.5, Number.NaN, '60' as unknown as number]) {
      const refused = (() => {
        try {
          step({ priority, run: () => null });
        } catch (error) {
          return error;
        }
        return null;
      })();
      expect(refused).toBeInstanceOf(DefinitionError);
      expect((refused as DefinitionError).code).toBe('invalid_definition');
      expect((refused as DefinitionError).problems).toEqual([
        `priority must be an integer number of seconds from -86400 to 86400, got ${String(priority)}`,
      ]);
    }
    expect(step({ priority: 86_400, run: () => null }).priority).toBe(86_400);
    expect(step({ priority: -86_400, run: () => null }).priority).toBe(-86_400);
  });

  it('at admission, with the code invalid_priority, and nothing is written', async () => {
    const cw = engine();
    const before = await tableCounts(url());
    for (const priority of [86_401, -86_401, 0.5, Number.POSITIVE_INFINITY, '1' as unknown]) {
      const refused = await cw
        .submit(plain.name, { label: 'x' }, { priority: priority as number })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(EngineError);
      expect((refused as EngineError).code).toBe('invalid_priority');
    }
    expect(await tableCounts(url())).toEqual(before);
    // The column refuses what the engine would, for a row written around it.
    const { workflow } = await cw.submit(plain.name, { label: 'y' }, { priority: 86_400 });
    const outOfRange = await query(
      url(),
      'update causeway_tasks set priority = priority + 1 where workflow_id = $1',
      [workflow.id],
    ).catch((error: unknown) => error);
    expect(String(outOfRange)).toContain('causeway_tasks_priority_range');
    await cw.close();
  });
});

describe('the claim walks the ready index in claim order and stops early (R49)', () => {
  it('reads a handful of index entries of 3,000 ready tasks, sorts nothing, as planned and generic', async () => {
    const planQueue = 'q-priority-plan';
    // Ready one-task workflows written directly, due up to an hour ago, with priorities
    // spread over an hour each way, so claim order is far from run_at order.
    await query(
      url(),
      `with w as (
         insert into causeway_workflows (id, name, state, input, created_at, updated_at)
         select gen_random_uuid(), $1, 'queued', '{}', now(), now() from generate_series(1, 3000)
         returning id)
       insert into causeway_tasks (id, workflow_id, step, queue, state, max_attempts, run_at,
                                   priority, created_at, updated_at)
       select gen_random_uuid(), w.id, 'only', $2, 'queued', 1,
              now() - random() * interval '1 hour', (random() * 7200 - 3600)::int, now(), now()
         from w`,
      [plain.name, planQueue],
    );
    await query(url(), 'analyze causeway_tasks');
    const cw = engine();
    const plan = claimStatementPlan(apply(), { queue: planQueue, limit: 5, holder: cw.holder });
    const compiled = claimStatement(plan).compile(cw.db);
    const expected = await query<{ id: string }>(
      url(),
      `select id from causeway_tasks where queue = $1 and state = 'queued'
        order by run_at - priority * interval '1 second' limit 5`,
      [planQueue],
    );
    const client = new pg.Client({ connectionString: url() });
    await client.connect();
    try {
      for (const mode of ['auto', 'force_generic_plan'] as const) {
        await client.query('begin');
        await client.query(`set local plan_cache_mode = ${mode}`);
        const nodes = await explainNodes(client, compiled.sql, compiled.parameters, 'analyze');
        const claimed = await client.query<{ task_id: string }>(
          `select task_id from causeway_transitions where reason = 'lease_acquired'
             and task_id in (select id from causeway_tasks where queue = $1) order by id`,
          [planQueue],
        );
        await client.query('rollback');
        const ready = nodes.filter((node) => node['Index Name'] === 'causeway_tasks_ready');
        expect(ready.length).toBe(1);
        // Stopped early: no more entries than the statement's literal bound (8 for 5).
        expect(ready[0]?.['Actual Rows']).toBeLessThanOrEqual(8);
        // In index order: the candidates' subplan reads the index and sorts nothing.
        const candidates = nodes.find(
          (node) => (node as { 'Subplan Name'?: string })['Subplan Name'] === 'CTE candidates',
        );
        const inCandidates = planNodes(candidates as PlanNode);
        expect(inCandidates).toContain(ready[0]);
        expect(inCandidates.filter((node) => node['Node Type'].includes('Sort'))).toEqual([]);
        expect(
          nodes.filter(
            (node) =>
              node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'causeway_tasks',
          ),
        ).toEqual([]);
        // And it took the five smallest run_at − priority, in that order.
        expect(claimed.rows.map((row) => row.task_id)).toEqual(expected.map((row) => row.id));
      }
    } finally {
      await client.end();
      await cw.close();
    }
  });
});

describe('explain says what a queued task with a priority jumps (R49)', () => {
  it('counts the queued tasks it goes ahead of, and those that go ahead of it', async () => {
    const cw = engine();
    const submit = async (priority?: number) =>
      (await cw.submit(explained.name, { label: 'x' }, priority === undefined ? {} : { priority }))
        .workflow.id;
    for (let older = 0; older < 3; older += 1) await submit();
    const urgentId = await submit(120);
    await submit(); // newer, and behind it: counted nowhere
    const patientId = await submit(-60);
    await submit(); // newer, and ahead of it
    const line = 'only: priority 120 s: jumps 3 older queued tasks of queue "q-priority-explain"';
    const urgentExplained = await cw.explain(urgentId);
    expect(urgentExplained.priority).toEqual([line]);
    expect(urgentExplained.text).toContain(line);
    expect((await cw.explain(patientId)).priority).toEqual([
      'only: priority -60 s: 1 newer queued task of queue "q-priority-explain" goes ahead of it',
    ]);
    // Claimed, it is no longer counted: what it went ahead of is not in the queue as it was.
    const worker = await cw.startWorker({
      queues: ['q-priority-explain'],
      concurrency: 1,
      sweeper: false,
    });
    await waitFor(async () => (await cw.getWorkflow(urgentId))?.state === 'succeeded', {
      description: 'the prioritised workflow to succeed',
    });
    await worker.stop();
    expect((await cw.explain(urgentId)).priority).toEqual([]);
    await cw.close();
  });
});
