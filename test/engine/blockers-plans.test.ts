import { type CausewayDatabase, createReadModel } from '@causeway/engine';
import { workflowRegistry } from '@causeway/workflow/internal';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { publishNote } from '../../examples/publish-note/workflow';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { explainNodes, relationBuffers, relationScans } from '../helpers/query-plans';

/**
 * `why` must not slow down as finished work piles up (issue 18): every statement the blockers
 * read runs through an index, and touches the same pages with 1,000 or 20,000 finished
 * workflows (each with its tasks and log rows) beside the one asked about.
 */
const database = useTestDatabase();
const url = () => database().url;
const definitions = workflowRegistry([publishNote]);

const pools: Kysely<CausewayDatabase>[] = [];
afterAll(async () => {
  await Promise.all(pools.map((db) => db.destroy()));
});

/** The blockers' statements for `workflowId` as run, each explained with ANALYZE and BUFFERS. */
async function explainBlockers(workflowId: string) {
  const statements: { sql: string; parameters: readonly unknown[] }[] = [];
  const db = new Kysely<CausewayDatabase>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url(), max: 2 }) }),
    log(event) {
      if (event.level === 'query' && /^\s*(select|with)/i.test(event.query.sql)) {
        statements.push({ sql: event.query.sql, parameters: event.query.parameters });
      }
    },
  });
  pools.push(db);
  const blockers = await createReadModel(db).blockersByWorkflowIds([workflowId], definitions);
  const plans = [];
  for (const statement of statements) {
    const all = await explainNodes(url(), statement.sql, statement.parameters, 'analyze, buffers');
    // Pages of the tables and their indexes only: a fresh connection's catalog lookups
    // (counted at the top) vary from run to run.
    plans.push({
      statement: statement.sql.trim().slice(0, 60),
      scans: relationScans(all),
      buffers: relationBuffers(all),
    });
  }
  return { blockers: blockers.get(workflowId) ?? [], plans };
}

/** Finished workflows with three succeeded tasks and their log rows, inserted directly. */
async function addFinishedWorkflows(from: number, to: number): Promise<void> {
  await query(
    url(),
    `with w as (
       insert into causeway_workflows (id, name, state, input, steps, created_at, updated_at)
       select gen_random_uuid(), 'publish-note', 'succeeded', '{}', 'render,review,publish',
              now() - interval '1 day', now() - interval '1 day'
         from generate_series($1::int, $2::int)
       returning id),
     t as (
       insert into causeway_tasks (id, workflow_id, step, queue, state, attempt, max_attempts,
                                   run_at, created_at, updated_at)
       select gen_random_uuid(), w.id, s.step, s.queue, 'succeeded', 1, 3,
              now() - interval '1 day', now() - interval '1 day', now() - interval '1 day'
         from w cross join (values ('render', 'cpu'), ('review', 'default'),
                                   ('publish', 'network')) as s(step, queue)
       returning id, workflow_id, step)
     insert into causeway_transitions (workflow_id, task_id, step, from_state, to_state, reason,
                                       actor, attempt, at)
     select t.workflow_id, t.id, t.step, e.from_state, e.to_state, e.reason, 'client', 1,
            now() - interval '1 day'
       from t cross join (values (null, 'queued', 'submitted'),
                                 ('queued', 'leased', 'lease_acquired'),
                                 ('leased', 'succeeded', 'completed')) as e(from_state, to_state, reason)`,
    [from, to],
  );
  await query(url(), 'analyze causeway_workflows');
  await query(url(), 'analyze causeway_tasks');
  await query(url(), 'analyze causeway_transitions');
}

describe("the blockers' reads", () => {
  it('use indexes only, and touch as many pages with 20 times the finished workflows', async () => {
    const engine = testEngine(url(), { workflows: [publishNote] });
    await engine.migrate();
    // A live worker on another queue (so the registry is read), and the workflow asked about.
    await engine.startWorker({ queues: ['default'], concurrency: 1 });
    const { workflow } = await engine.submit('publish-note', { noteId: 'why', version: 1 });

    await addFinishedWorkflows(1, 1_000);
    const small = await explainBlockers(workflow.id);
    await addFinishedWorkflows(1_001, 20_000);
    const large = await explainBlockers(workflow.id);
    const [finished] = await query<{ n: number }>(
      url(),
      `select count(*)::int as n from causeway_workflows where state = 'succeeded'`,
    );
    expect(finished?.n).toBe(20_000);

    expect(large.blockers.map((blocker) => blocker.code)).toEqual([
      'no_worker',
      'upstream_pending',
      'upstream_pending',
    ]);
    // The tasks with their latest edges, the due queue's load, the registry.
    expect(large.plans.map((plan) => plan.statement)).toHaveLength(3);
    for (const plan of [...small.plans, ...large.plans]) {
      const fullScans = plan.scans.filter(
        (scan) => scan.startsWith('Seq Scan') && !scan.endsWith('causeway_workers'),
      );
      expect(fullScans, plan.statement).toEqual([]);
    }
    // Twenty times the finished rows: the same pages, but for indexes grown a level deeper
    // (a page more for each probe: the tasks, and each open task's latest edge). A scan that
    // grew with the rows would touch hundreds more.
    large.plans.forEach((plan, index) => {
      expect(plan.buffers, plan.statement).toBeLessThanOrEqual(
        (small.plans[index]?.buffers ?? 0) * 1.5 + 2,
      );
    });
  }, 120_000);
});
