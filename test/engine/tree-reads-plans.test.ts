/**
 * The tree's reads (R48) beside a long history: 20,000 finished workflows and a finished tree
 * of 300 children, then a live tree of a few children. Every statement that reads children
 * (a page of a workflow's children and its count, the steps' child counts, the list by parent
 * and by root and their counts, the blockers' first open child) goes through the indexes of
 * migration 0025 and scans no table; a page reads about its own rows, not the finished tree's.
 */
import { createReadModel } from '@causeway/engine';
import { startChildren, workflow } from '@causeway/workflow';
import { type CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { historySql } from '../../bench/causeway-history';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { explainNodes, type PlanNode } from '../helpers/query-plans';
import { waitFor } from '../helpers/wait-for';

const database = useTestDatabase();
const url = () => database().url;

const quick = workflow({ name: 'plan-quick', input: z.object({ n: z.number() }) })
  .step('only', { queue: 'q-plan', run: (ctx) => ctx.input.n })
  .build();
const held = workflow({ name: 'plan-held', input: z.object({ n: z.number() }) })
  .event('hold', { name: 'plan.release', key: (ctx) => String(ctx.input.n), timeoutMs: 600_000 })
  .build();
const fanOut = workflow({
  name: 'plan-fan',
  input: z.object({ kind: z.enum(['quick', 'held']), count: z.number() }),
})
  .step('fan', {
    queue: 'q-plan',
    run: (ctx) =>
      startChildren(
        ctx.input.kind === 'quick' ? quick : held,
        Array.from({ length: ctx.input.count }, (_, n) => ({ n })),
      ),
  })
  .build();

let db: Kysely<CausewayDatabase>;
let live = '';
const captured: CompiledQuery[] = [];

beforeAll(async () => {
  const engine = testEngine(url(), { workflows: [quick, held, fanOut] });
  await engine.migrate();
  await query(url(), historySql, [20_000, 'bench-noop']);
  const worker = await engine.startWorker({ queues: ['q-plan'], concurrency: 8 });
  const finished = await engine.submit('plan-fan', { kind: 'quick', count: 300 });
  await waitFor(
    async () => (await engine.getWorkflow(finished.workflow.id))?.state === 'succeeded',
    { timeoutMs: 60_000, description: 'the finished tree' },
  );
  live = (await engine.submit('plan-fan', { kind: 'held', count: 5 })).workflow.id;
  await waitFor(
    async () => (await engine.getWorkflow(live))?.childCounts[0]?.byState.waiting === 5,
    { timeoutMs: 30_000, description: 'the live tree waiting' },
  );
  await worker.stop({ drainMs: 1_000 });
  await engine.close();
  await query(url(), 'analyze');
  db = new Kysely<CausewayDatabase>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url(), max: 1 }) }),
    log: (event) => {
      if (event.level === 'query') captured.push(event.query);
    },
  });
}, 180_000);
afterAll(async () => {
  await db?.destroy();
});

const treeColumns = /parent_task_id|parent_workflow_id|root_workflow_id/;

async function plansOf(statements: readonly CompiledQuery[]): Promise<PlanNode[][]> {
  const plans: PlanNode[][] = [];
  for (const statement of statements) {
    plans.push(await explainNodes(url(), statement.sql, statement.parameters, 'analyze'));
  }
  return plans;
}

describe("the tree's reads beside a long history", () => {
  it('answer the live tree, through the tree indexes, reading no finished child', async () => {
    const reads = createReadModel(db);
    captured.length = 0;
    const page = await reads.childPage(live, {}, { limit: 3 });
    expect(page.rows.map((row) => row.workflow.parent?.index)).toEqual([0, 1, 2]);
    const after = page.rows.at(-1)?.key ?? null;
    const rest = await reads.childPage(live, { states: ['waiting'] }, { after, limit: 3 });
    expect(rest.rows.map((row) => row.workflow.parent?.index)).toEqual([3, 4]);
    expect(await reads.childCount(live, {}, 10_001)).toBe(5);
    const [counts] = (await reads.childCountsByWorkflowIds([live])).get(live) ?? [];
    expect(counts?.byState.waiting).toBe(5);
    const byParent = await reads.workflowPage({ parentId: live }, { limit: 50 });
    expect(byParent.rows).toHaveLength(5);
    expect(await reads.workflowCount({ rootId: live }, 10_001)).toBe(5);
    const byRoot = await reads.workflowPage({ rootId: live, states: ['waiting'] }, { limit: 50 });
    expect(byRoot.rows).toHaveLength(5);
    const beforeBlockers = captured.length;
    const [blocker] = (await reads.blockersByWorkflowIds([live], new Map())).get(live) ?? [];
    expect(blocker?.code).toBe('children_pending');
    // Two levels (the parent, then its first open child), a few statements each: the blockers'
    // facts, the workers, the first open child; never one per child.
    const blockerStatements = captured.slice(beforeBlockers);
    expect(
      blockerStatements.filter((statement) => /^\s*select/i.test(statement.sql)).length,
    ).toBeLessThanOrEqual(6);

    const statements = captured.filter((statement) => treeColumns.test(statement.sql));
    // Two pages, a count, the counts, two list pages, a list count, the first open child.
    expect(statements).toHaveLength(8);
    const used = new Set<string>();
    for (const [index, plan] of (await plansOf(statements)).entries()) {
      const scans = plan.filter((node) => node['Node Type'] === 'Seq Scan');
      expect(
        scans.map((node) => node['Relation Name']),
        statements[index]?.sql,
      ).toEqual([]);
      for (const node of plan) if (node['Index Name'] !== undefined) used.add(node['Index Name']);
      // Rows read from the workflows table: the live tree's own, not the 300 finished children.
      const read = plan
        .filter((node) => node['Relation Name'] === 'causeway_workflows')
        .reduce(
          (sum, node) =>
            sum +
            ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) *
              (node['Actual Loops'] ?? 1),
          0,
        );
      expect(read, statements[index]?.sql).toBeLessThanOrEqual(10);
    }
    for (const index of [
      'causeway_workflows_parent_task',
      'causeway_workflows_parent',
      'causeway_workflows_root',
    ]) {
      expect([...used]).toContain(index);
    }
  });
});
