import type { CausewayDatabase } from '@causeway/engine';
import { workflowRegistry } from '@causeway/workflow/internal';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  taskListChildrenDecided,
  taskListExpiredLeases,
  taskListQueuedPastDeadline,
  taskListReceiptOverdue,
  taskListWaitsTimedOut,
} from '../../packages/engine/src/db/sweep/sweep-queries';
import {
  eventSnapshotNow,
  taskListWaitsOfNewEvents,
} from '../../packages/engine/src/db/sweep/waits-of-new-events';
import { taskListWaitsWithStoredEvents } from '../../packages/engine/src/db/sweep/waits-with-stored-events';
import { stepTableOf } from '../../packages/engine/src/runtime/step-table';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { explainNodes, relationBuffers, relationScans } from '../helpers/query-plans';
import { rollingDigest, rollingReview } from './fixtures/rolling-event-workflows';

/**
 * The sweeper's lists, with the filter that keeps them to what the sweeping engine defines
 * (R54), read their partial indexes and probe the workflows' primary key: no list reads every
 * task, workflow or event, and finished work piling up (20 times as much) leaves the pages
 * they touch as they were. EXPLAIN ANALYZE on real PostgreSQL, run as the sweeper runs them.
 */
const database = useTestDatabase();
const url = () => database().url;
const stepKeys = stepTableOf(workflowRegistry([rollingReview])).stepKeys;

const pools: Kysely<CausewayDatabase>[] = [];
afterAll(async () => {
  await Promise.all(pools.map((db) => db.destroy()));
});

/** Every sweep list's statement as run, explained with ANALYZE and BUFFERS. */
async function explainLists(eventsSince: string) {
  const statements: { sql: string; parameters: readonly unknown[] }[] = [];
  const db = new Kysely<CausewayDatabase>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url(), max: 2 }) }),
    log(event) {
      if (event.level === 'query') {
        statements.push({ sql: event.query.sql, parameters: event.query.parameters });
      }
    },
  });
  pools.push(db);
  await taskListExpiredLeases(db, stepKeys, 200);
  await taskListQueuedPastDeadline(db, stepKeys, 200);
  await taskListReceiptOverdue(db, stepKeys, 200);
  await taskListWaitsTimedOut(db, stepKeys, 200);
  await taskListChildrenDecided(db, stepKeys, 200);
  const listed = await taskListWaitsWithStoredEvents(db, stepKeys, {
    afterTaskId: null,
    limit: 200,
  });
  const fresh = await taskListWaitsOfNewEvents(db, eventsSince);
  const plans = [];
  for (const statement of statements) {
    const all = await explainNodes(url(), statement.sql, statement.parameters, 'analyze, buffers');
    plans.push({
      statement: statement.sql.trim().replace(/\s+/g, ' ').slice(0, 70),
      scans: relationScans(all),
      buffers: relationBuffers(all),
    });
  }
  return { listed, fresh, plans };
}

/** Finished workflows, each with a succeeded task, inserted directly. */
async function addFinishedWorkflows(from: number, to: number): Promise<void> {
  await query(
    url(),
    `with w as (
       insert into causeway_workflows (id, name, state, input, steps, created_at, updated_at)
       select gen_random_uuid(), 'rolling-review', 'succeeded', '{}', 'approval,publish',
              now() - interval '1 day', now() - interval '1 day'
         from generate_series($1::int, $2::int)
       returning id)
     insert into causeway_tasks (id, workflow_id, step, queue, state, attempt, max_attempts,
                                 run_at, created_at, updated_at)
     select gen_random_uuid(), w.id, 'publish', 'default', 'succeeded', 1, 3,
            now() - interval '1 day', now() - interval '1 day', now() - interval '1 day'
       from w`,
    [from, to],
  );
  await query(url(), 'analyze causeway_workflows');
  await query(url(), 'analyze causeway_tasks');
  await query(url(), 'analyze causeway_events');
}

describe("the sweeper's lists", () => {
  it('read their indexes, and touch as many pages with 20 times the finished work', async () => {
    const reviews = testEngine(url(), { workflows: [rollingReview] });
    await reviews.migrate();
    const digests = testEngine(url(), { workflows: [rollingDigest] });
    // Parked waits of both services, events stored for keys nobody waits for, and one wait
    // whose event the other service stored.
    const many = Array.from({ length: 1_000 }, (_, i) => i);
    await reviews.submitMany(
      many.map((i) => ({ name: 'rolling-review', input: { noteId: `parked-${i}` } })),
    );
    await digests.submitMany(
      many.map((i) => ({ name: 'rolling-digest', input: { noteId: `parked-${i}` } })),
    );
    await digests.sendEvents(
      many.map((i) => ({ name: 'rolling.approved', key: `nobody-${i}`, payload: { i } })),
    );
    const { workflow } = await reviews.submit('rolling-review', { noteId: 'missed' });
    const eventsSince = await eventSnapshotNow(reviews.db);
    await digests.sendEvent('rolling.approved', 'missed', { approved: true, editor: 'ed' });

    await addFinishedWorkflows(1, 1_000);
    const small = await explainLists(eventsSince);
    await addFinishedWorkflows(1_001, 20_000);
    const large = await explainLists(eventsSince);

    expect(large.listed.map((wait) => wait.workflowId)).toEqual([workflow.id]);
    const missedTask = (await reviews.getWorkflow(workflow.id))?.tasks[0]?.id;
    expect(large.fresh.taskIds).toEqual([missedTask]);
    expect(large.plans).toHaveLength(7);
    for (const plan of [...small.plans, ...large.plans]) {
      const fullScans = plan.scans.filter((scan) => scan.startsWith('Seq Scan'));
      expect(fullScans, plan.statement).toEqual([]);
    }
    large.plans.forEach((plan, index) => {
      expect(plan.buffers, plan.statement).toBeLessThanOrEqual(
        (small.plans[index]?.buffers ?? 0) * 1.5 + 2,
      );
    });
    // A later pass reads the events stored since the one before, not the 2,000 parked waits
    // nor the 1,000 stored events the look at every wait reads (some 2,000 pages).
    const newEvents = large.plans.at(-1);
    expect(newEvents?.scans).toEqual([
      'Index Scan causeway_events_xact',
      'Index Scan causeway_events_xact',
      'Index Scan causeway_tasks_waiting',
    ]);
    expect(newEvents?.buffers).toBeLessThan(20);
  }, 120_000);
});
