/**
 * R50 fairness: one hot key (limit 1) whose 5,000 due tasks are all older than 100 cold keys'
 * one task each. A claim takes at most `limit − held` of each key, keys in the order of their
 * oldest due task, so the hot key's backlog delays no cold task by more than one claim round;
 * and the one-statement claim reads the hot key's head, never its backlog (EXPLAIN, BUFFERS).
 */
import type { Engine } from '@causeway/engine';
import { defineWorkflow, step } from '@causeway/workflow';
import { workflowRegistry } from '@causeway/workflow/internal';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { arrayLiteral } from '../../packages/engine/src/db/array-literal';
import { claimStatement } from '../../packages/engine/src/db/claim/claim-statement';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { claimInFull } from '../../packages/engine/src/runtime/claim/claim-in-full';
import {
  claimReadyTasks,
  claimStatementPlan,
} from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import type { ClaimedTask } from '../../packages/engine/src/runtime/claim/claimed-task';
import { applyEvents } from '../../packages/engine/src/runtime/decision/apply-events';
import { createTestDatabase, useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { type PlanNode, planNodes } from '../helpers/query-plans';
import { rolledBack } from './stored-runs';

const database = useTestDatabase();
const url = () => database().url;

const queue = 'q-fair';
const input = z.object({ tenant: z.string(), n: z.number().int() });
type Input = z.output<typeof input>;
const fair = defineWorkflow({
  name: 'fair-keyed',
  input,
  steps: {
    only: step<Input>({
      queue,
      maxAttempts: 1,
      concurrency: { key: (ctx) => ctx.input.tenant, limit: 1, group: 'fair' },
      run: () => null,
    }),
  },
});
/** Tasks of one key on another queue: rows beside the claim's, never its candidates. */
const other = defineWorkflow({
  name: 'fair-other',
  input,
  steps: {
    only: step<Input>({
      queue: 'q-fair-other',
      concurrency: { key: (ctx) => ctx.input.tenant, limit: 1, group: 'fair-other' },
      run: () => null,
    }),
  },
});
const workflows = [fair, other];
const apply = () => ({
  definitions: workflowRegistry(workflows),
  leaseMs: 30_000,
  random: Math.random,
});
const engine = (databaseUrl: string): Engine => testEngine(databaseUrl, { workflows });

const hotCount = 5_000;
const coldCount = 100;

beforeAll(async () => {
  const setup = engine(url());
  await setup.migrate();
  await setup.close();
});

type Path = 'one statement' | 'in full';
const paths: readonly Path[] = ['one statement', 'in full'];

async function claim(tx: Transaction<CausewayDatabase>, path: Path, limit: number) {
  const request = { queue, limit, holder: 'fair-host/1/boot' };
  const result =
    path === 'one statement'
      ? await claimReadyTasks(tx, apply(), request)
      : await claimInFull(tx, apply(), request);
  return result.claimed;
}

/** Submits `count` tasks of `tenant` (or of `tenant-0…`, one each, when `oneEach`). */
async function submitTenants(
  cw: Engine,
  db: Transaction<CausewayDatabase> | null,
  options: { tenant: string; count: number; oneEach: boolean; delayMs: number },
) {
  const requests = Array.from({ length: options.count }, (_, n) => ({
    name: fair.name,
    input: { tenant: options.oneEach ? `${options.tenant}-${n}` : options.tenant, n },
  }));
  await cw.submitMany(requests, {
    delayMs: options.delayMs,
    ...(db === null ? {} : { transaction: db }),
  });
}

/** The hot key's 5,000 tasks, then the 100 cold keys' a second later; all due now. */
async function submitHotAndCold(cw: Engine, tx: Transaction<CausewayDatabase>) {
  await submitTenants(cw, tx, { tenant: 'hot', count: hotCount, oneEach: false, delayMs: 0 });
  await submitTenants(cw, tx, { tenant: 'cold', count: coldCount, oneEach: true, delayMs: 1_000 });
  await sql`update causeway_clock set offset_ms = offset_ms + 60000`.execute(tx);
}

/** Tenants of the claimed tasks, read back by task id. */
async function tenantsOf(tx: Transaction<CausewayDatabase>, claimed: readonly ClaimedTask[]) {
  if (claimed.length === 0) return [];
  const { rows } = await sql<{ key: string }>`
    select concurrency_key as key from causeway_tasks
    where id = any(${claimed.map((task) => task.task.id)}::uuid[])`.execute(tx);
  return rows.map((row) => row.key);
}

/** Each claimed task succeeds through the worker's fenced settle, freeing its slot. */
async function completeAll(tx: Transaction<CausewayDatabase>, claimed: readonly ClaimedTask[]) {
  const worker = { kind: 'worker', name: 'fair-host/1/boot' } as const;
  const result = await applyEvents(
    tx,
    apply(),
    claimed.map((task) => ({
      taskId: task.task.id,
      workflowId: task.task.workflowId,
      event: { type: 'complete', actor: worker },
      fence: { taskId: task.task.id, holder: worker.name, epoch: task.task.leaseEpoch },
      extra: { outputJson: 'null' },
    })),
  );
  expect(result.outcomes.map((outcome) => outcome.kind)).toEqual(claimed.map(() => 'applied'));
}

describe.each(paths)('a claim %s beside a hot key of 5,000 due tasks (R50)', (path) => {
  it('with a limit of at least 101 takes one hot task and every cold one at once', async () => {
    const cw = engine(url());
    const result = await rolledBack(cw.db as Kysely<CausewayDatabase>, async (tx) => {
      await submitHotAndCold(cw, tx);
      const first = await tenantsOf(tx, await claim(tx, path, 101));
      const second = await tenantsOf(tx, await claim(tx, path, 101));
      return { first, second };
    });
    expect(result.first.filter((key) => key === 'hot')).toHaveLength(1);
    expect(new Set(result.first.filter((key) => key !== 'hot')).size).toBe(coldCount);
    expect(result.first).toHaveLength(1 + coldCount);
    // The hot key holds its one slot; the cold keys have nothing left.
    expect(result.second).toEqual([]);
  }, 60_000);

  it('with a limit of 10 claims every cold task within ceil(100 / 9) + 1 rounds', async () => {
    const cw = engine(url());
    const bound = Math.ceil(coldCount / 9) + 1;
    const rounds = await rolledBack(cw.db as Kysely<CausewayDatabase>, async (tx) => {
      await submitHotAndCold(cw, tx);
      const perRound: { hot: number; cold: number }[] = [];
      let coldClaimed = 0;
      while (coldClaimed < coldCount && perRound.length < bound + 5) {
        const claimed = await claim(tx, path, 10);
        const keys = await tenantsOf(tx, claimed);
        const hot = keys.filter((key) => key === 'hot').length;
        perRound.push({ hot, cold: keys.length - hot });
        coldClaimed += keys.length - hot;
        // The hot task ends before the next round, so the hot key competes in every round:
        // the worst case for the cold keys.
        await completeAll(tx, claimed);
      }
      return perRound;
    });
    expect(rounds.reduce((sum, round) => sum + round.cold, 0)).toBe(coldCount);
    expect(rounds.length).toBeLessThanOrEqual(bound);
    // The hot key's oldest task heads every round, and takes its one slot, never more.
    for (const round of rounds) expect(round).toMatchObject({ hot: 1 });
    for (const round of rounds.slice(0, -1)) expect(round.cold).toBe(9);
  }, 60_000);
});

/**
 * The worker's one-statement claim (limit 10), explained with ANALYZE and BUFFERS in a
 * transaction that rolls back: the pages of tables and indexes it touched.
 */
async function claimBuffers(databaseUrl: string, mode: 'custom' | 'generic') {
  const plan = claimStatementPlan(apply(), { queue, limit: 10, holder: 'explain-host/1/boot' });
  const kysely = new Kysely<CausewayDatabase>({
    dialect: new PostgresDialect({ pool: new pg.Pool() }),
  });
  const compiled = claimStatement(plan).compile(kysely);
  await kysely.destroy();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('begin');
    let rows: { 'QUERY PLAN': { Plan: PlanNode }[] }[];
    if (mode === 'custom') {
      ({ rows } = await client.query(`explain (analyze, buffers, format json) ${compiled.sql}`, [
        ...compiled.parameters,
      ]));
    } else {
      await client.query('set local plan_cache_mode = force_generic_plan');
      const types = compiled.parameters.map(() => 'unknown').join(', ');
      await client.query(`prepare keyed_claim (${types}) as ${compiled.sql}`);
      const literals = compiled.parameters.map((value) =>
        value === null
          ? 'null'
          : `'${(Array.isArray(value) ? arrayLiteral(value) : String(value)).replaceAll("'", "''")}'`,
      );
      ({ rows } = await client.query(
        `explain (analyze, buffers, format json) execute keyed_claim (${literals.join(', ')})`,
      ));
    }
    await client.query('rollback');
    await client.query('deallocate all');
    const top = rows[0]?.['QUERY PLAN'][0]?.Plan;
    if (top === undefined) throw new Error('EXPLAIN returned no plan');
    const all = planNodes(top);
    const leased = all.find(
      (node) => node['Node Type'] === 'ModifyTable' && node['Relation Name'] === 'causeway_tasks',
    );
    return {
      buffers: (top['Shared Hit Blocks'] ?? 0) + (top['Shared Read Blocks'] ?? 0),
      leased: leased?.['Actual Rows'],
      keyedReads: all
        .filter((node) =>
          ['causeway_tasks_keyed_ready', 'causeway_tasks_slot_holders'].includes(
            node['Index Name'] ?? '',
          ),
        )
        .reduce(
          (pages, node) =>
            pages + (node['Shared Hit Blocks'] ?? 0) + (node['Shared Read Blocks'] ?? 0),
          0,
        ),
      shape: all.map(
        (node) => `${node['Node Type']} ${node['Index Name'] ?? node['Relation Name'] ?? ''}`,
      ),
    };
  } finally {
    await client.end();
  }
}

/**
 * A database of its own with the hot key's `hot` due tasks (oldest), the 100 cold keys', and
 * `filler` tasks of one key on another queue, so the tables and the keyed index are the same
 * size whatever the hot key's backlog: the planner sees the same statistics and picks the same
 * plan, and only what the claim reads of the hot key can differ.
 */
async function explainedBeside(hot: number, filler: number) {
  const scratch = await createTestDatabase();
  try {
    const cw = engine(scratch.url);
    await cw.migrate();
    await submitTenants(cw, null, { tenant: 'hot', count: hot, oneEach: false, delayMs: 0 });
    await submitTenants(cw, null, {
      tenant: 'cold',
      count: coldCount,
      oneEach: true,
      delayMs: 1_000,
    });
    await cw.submitMany(
      Array.from({ length: filler }, (_, n) => ({
        name: other.name,
        input: { tenant: 'filler', n },
      })),
    );
    await query(scratch.url, 'update causeway_clock set offset_ms = offset_ms + 60000');
    // Every task made queued rewrote its key's row (the head trigger): compact those versions,
    // so both databases' key tables are the same size and the planner sees the same tables.
    await query(scratch.url, 'vacuum full causeway_concurrency_keys');
    await query(scratch.url, 'vacuum analyze');
    const [ready] = await query<{ n: number }>(
      scratch.url,
      `select count(*)::int as n from causeway_tasks
       where concurrency_key = 'hot' and state = 'queued'`,
    );
    expect(ready?.n).toBe(hot);
    const explained = {
      custom: await claimBuffers(scratch.url, 'custom'),
      generic: await claimBuffers(scratch.url, 'generic'),
    };
    await cw.close();
    return explained;
  } finally {
    await scratch.drop();
  }
}

describe('the one-statement claim beside a hot key', () => {
  it("reads the hot key's head, not its backlog: the same pages beside 50 or 5,000 tasks", async () => {
    const small = await explainedBeside(50, hotCount - 49);
    const large = await explainedBeside(hotCount, 1);
    for (const mode of ['custom', 'generic'] as const) {
      // The same plan, leasing one hot task and nine cold ones, both times.
      expect(large[mode].shape, mode).toEqual(small[mode].shape);
      expect(small[mode].leased, mode).toBe(10);
      expect(large[mode].leased, mode).toBe(10);
      // A hundred times the backlog behind the hot key's head: the pages of the keyed indexes
      // it reads, and of the whole statement, stay flat.
      expect(large[mode].keyedReads, mode).toBeLessThanOrEqual(small[mode].keyedReads + 4);
      // (The whole statement's count moves by a page or so from run to run.)
      expect(large[mode].buffers, mode).toBeLessThanOrEqual(small[mode].buffers + 16);
    }
  }, 60_000);
});
