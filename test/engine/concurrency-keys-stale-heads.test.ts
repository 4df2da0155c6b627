/**
 * R50 cost of keys whose queued tasks left the queue without a claim (cancelled before start,
 * superseded, dead past their deadline): a claim of a queue with nothing queued reads about
 * the same pages beside 5 such keys as beside 500.
 *
 * A key row's `head_at` (migration 0030) moves later when a claim grants the key
 * (`keyGrantCtes`); a key whose queued tasks were all cancelled keeps its head until the
 * sweeper moves it on (`concurrencyHeadsRepair`, at most 200 keys a pass, oldest heads first).
 * Without that, every later claim of its queue would walk such a key: a holder count and a
 * probe of causeway_tasks_keyed_ready per key, with no task queued, on every poll, for good.
 */
import { defineWorkflow, step } from '@causeway/workflow';
import { workflowRegistry } from '@causeway/workflow/internal';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { claimStatement } from '../../packages/engine/src/db/claim/claim-statement';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { claimStatementPlan } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { type PlanNode, planNodes } from '../helpers/query-plans';

const database = useTestDatabase();

const queue = 'q-stale-heads';
const input = z.object({ tenant: z.string() });
const keyed = defineWorkflow({
  name: 'stale-heads',
  input,
  steps: {
    only: step<{ tenant: string }>({
      queue,
      concurrency: { key: (ctx) => ctx.input.tenant, limit: 1 },
      run: () => null,
    }),
  },
});

/** The one-statement claim explained with ANALYZE and BUFFERS, rolled back: pages touched. */
async function claimPages(url: string): Promise<number> {
  const plan = claimStatementPlan(
    { definitions: workflowRegistry([keyed]), leaseMs: 30_000, random: Math.random },
    { queue, limit: 10, holder: 'stale-host/1/boot' },
  );
  const kysely = new Kysely<CausewayDatabase>({
    dialect: new PostgresDialect({ pool: new pg.Pool() }),
  });
  const compiled = claimStatement(plan).compile(kysely);
  await kysely.destroy();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('begin');
    const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      `explain (analyze, buffers, format json) ${compiled.sql}`,
      [...compiled.parameters],
    );
    await client.query('rollback');
    const top = rows[0]?.['QUERY PLAN'][0]?.Plan;
    if (top === undefined) throw new Error('EXPLAIN returned no plan');
    const leased = planNodes(top).find(
      (node) => node['Node Type'] === 'ModifyTable' && node['Relation Name'] === 'causeway_tasks',
    );
    expect(leased?.['Actual Rows']).toBe(0);
    return (top['Shared Hit Blocks'] ?? 0) + (top['Shared Read Blocks'] ?? 0);
  } finally {
    await client.end();
  }
}

describe('keys whose tasks were cancelled before a claim (R50)', () => {
  it('cost an empty claim about the same pages, 5 keys or 500, once swept', async () => {
    const url = database().url;
    const cw = testEngine(url, { workflows: [keyed] });
    await cw.migrate();
    const cancelled = async (from: number, to: number) => {
      const submitted = await cw.submitMany(
        Array.from({ length: to - from }, (_, n) => ({
          name: keyed.name,
          input: { tenant: `tenant-${from + n}` },
        })),
      );
      for (const result of submitted) await cw.cancelWorkflow(result.workflow.id);
      await query(url, 'update causeway_clock set offset_ms = offset_ms + 60000');
      for (let pass = 0; pass < Math.ceil((to - from) / 200); pass += 1) await cw.sweep();
      await query(url, 'vacuum analyze');
    };
    await cancelled(0, 5);
    const few = await claimPages(url);
    await cancelled(5, 500);
    const [queued] = await query<{ n: number }>(
      url,
      `select count(*)::int as n from causeway_tasks where state = 'queued'`,
    );
    expect(queued?.n).toBe(0);
    const many = await claimPages(url);
    // Flat up to a few pages of the grown tables; walking the 495 keys read about 1,500 more.
    expect(many).toBeLessThanOrEqual(few + 32);
  }, 60_000);
});
