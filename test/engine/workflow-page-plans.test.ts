/**
 * A page of live workflows (oldest first) and their count read no finished
 * workflow: beside many finished workflows created before the live ones, a page of live
 * states answers exactly the workflows in those states (checked against a plain scan of the
 * table), and its plan reads the workflows by primary key, never walking the (created_at, id)
 * index through the history or scanning a table. A dead workflow keeps pending tasks
 * downstream of its dead step: it must not appear among the live ones.
 */
import { createReadModel } from '@causeway/engine';
import { defineWorkflow, StepError, step, type WorkflowState } from '@causeway/workflow';
import { type CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { historySql } from '../../bench/causeway-history';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

const database = useTestDatabase();
const url = () => database().url;
const finishedWorkflows = 20_000;
const liveStates: WorkflowState[] = ['queued', 'running', 'waiting', 'cancel_requested'];

const failing = defineWorkflow({
  name: 'page-failing',
  input: z.object({ i: z.number() }),
  steps: {
    first: step({
      maxAttempts: 1,
      run: () => {
        throw new StepError('invalid_argument', 'refused');
      },
    }),
    second: step({ after: ['first'], run: () => null }),
  },
});
const parked = defineWorkflow({
  name: 'page-parked',
  input: z.object({ i: z.number() }),
  steps: { only: step({ queue: 'nobody', run: () => null }) },
});

let db: Kysely<CausewayDatabase>;
const captured: CompiledQuery[] = [];

beforeAll(async () => {
  const engine = testEngine(url(), { workflows: [failing, parked] });
  await engine.migrate();
  await query(url(), historySql, [finishedWorkflows, 'bench-noop']);
  const dead = await engine.submit('page-failing', { i: 1 });
  for (let i = 0; i < 3; i += 1) await engine.submit('page-parked', { i });
  const worker = await engine.startWorker({ queues: ['default'], concurrency: 1 });
  await waitFor(async () => (await engine.getWorkflow(dead.workflow.id))?.state === 'dead', {
    timeoutMs: 30_000,
  });
  await worker.stop({ drainMs: 1_000 });
  await engine.close();
  await query(url(), 'analyze');
  db = new Kysely<CausewayDatabase>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url(), max: 1 }) }),
    log: (event) => {
      if (event.level === 'query') captured.push(event.query);
    },
  });
}, 120_000);
afterAll(async () => {
  await db?.destroy();
});

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly Plans?: readonly PlanNode[];
}
const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

async function planOf(compiled: CompiledQuery): Promise<PlanNode[]> {
  const rows = await query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
    url(),
    `explain (format json) ${compiled.sql}`,
    [...compiled.parameters],
  );
  return nodes(
    (rows[0] as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0]?.Plan as PlanNode,
  );
}

describe('a page of live workflows beside a long history', () => {
  it('answers exactly the workflows in those states, and the count agrees', async () => {
    const readModel = createReadModel(db);
    const expected = await query<{ id: string }>(
      url(),
      `select id from causeway_workflows where state = any($1) order by created_at, id`,
      [liveStates],
    );
    expect(expected).toHaveLength(3);
    const page = await readModel.workflowPage(
      { states: liveStates },
      { limit: 50, order: 'oldest_first' },
    );
    expect(page.rows.map((row) => row.workflow.id)).toEqual(expected.map((row) => row.id));
    expect(await readModel.workflowCount({ states: liveStates }, 10_001)).toBe(3);
    // The dead workflow (its second step still pending) is found by its own state.
    const deadPage = await readModel.workflowPage({ states: ['dead'] }, { limit: 50 });
    expect(deadPage.rows.map((row) => row.workflow.name)).toEqual(['page-failing']);
  });

  it('reads the live workflows by primary key, not through the history', async () => {
    captured.length = 0;
    const readModel = createReadModel(db);
    await readModel.workflowPage({ states: liveStates }, { limit: 50 });
    await readModel.workflowCount({ states: liveStates }, 10_001);
    expect(captured).toHaveLength(2);
    for (const statement of captured) {
      const plan = await planOf(statement);
      const scans = plan.filter((node) => node['Node Type'] === 'Seq Scan');
      expect(scans.map((node) => node['Relation Name'])).toEqual([]);
      const used = plan.flatMap((node) => node['Index Name'] ?? []);
      expect(used).toContain('causeway_workflows_pkey');
      expect(used).not.toContain('causeway_workflows_created');
    }
  });

  it('walks the history for a terminal state, as a control that the seed is large enough', async () => {
    captured.length = 0;
    await createReadModel(db).workflowPage({ states: ['succeeded'] }, { limit: 50 });
    const plan = await planOf(captured[0] as CompiledQuery);
    expect(plan.flatMap((node) => node['Index Name'] ?? [])).toContain(
      'causeway_workflows_created',
    );
  });
});
