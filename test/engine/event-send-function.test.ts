/**
 * The send function (`event-send-function.ts`: one event's send as a PL/pgSQL function each
 * connection makes in `pg_temp`). What it writes is checked row for row against the full
 * decision in event-send-statement.test.ts and for atomicity in one-statement-atomicity.test.ts;
 * here, its plans at scale and its life on a connection.
 *
 * At scale, counted rather than timed: one event with 1,000 waits for its key (with promotions,
 * half of them making a step ready) must make the executor read a bounded number of rows per
 * wait (produced, or removed by a filter) over all plan nodes of all the statements the
 * function runs (auto_explain's nested plans), with every join a nested loop. Its plans are generic and made once per connection,
 * so they are checked as made while the tables were nearly empty (never analyzed) and as made
 * after an ANALYZE: a statement that scanned a partial index of every waiting task for each
 * wait would produce a million rows here, where the bound is 200,000.
 */
import { randomUUID } from 'node:crypto';
import type { Engine } from '@causeway/engine';
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { eventSendFunction } from '../../packages/engine/src/db/events/event-send-function';
import { eventSendShapeOf } from '../../packages/engine/src/runtime/events/one-statement-send';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import {
  expectSendCompleted,
  planAlone,
  planApproval,
  planChained,
  planRowsPerWait,
  planWaitCount,
} from './fixtures/event-plan-workflows';

interface PlanNode {
  readonly 'Actual Rows': number;
  readonly 'Actual Loops': number;
  readonly 'Rows Removed by Filter'?: number;
  readonly 'Rows Removed by Index Recheck'?: number;
  readonly Plans?: readonly PlanNode[];
}

/** Rows every node read, over all its loops: those it produced and those its filter removed. */
const rowsRead = (node: PlanNode): number =>
  (node['Actual Rows'] +
    (node['Rows Removed by Filter'] ?? 0) +
    (node['Rows Removed by Index Recheck'] ?? 0)) *
    node['Actual Loops'] +
  (node.Plans ?? []).reduce((sum, child) => sum + rowsRead(child), 0);

/** The call's ten parameters for one event (as the engine sends them). */
function parameters(key: string): (string | null)[] {
  const id = randomUUID();
  return [
    id,
    planApproval.name,
    key,
    '{"ok":true}',
    null,
    null,
    '{"ok":true}',
    JSON.stringify({ eventId: id }),
    'client',
    'client',
  ];
}

const db = useTestDatabase();

const cases = (['never analyzed', 'analyzed'] as const).flatMap((statistics) =>
  [true, false].map((promotes) => ({ statistics, promotes })),
);

describe('the send function at scale', () => {
  it.each(cases)(
    'reads a bounded number of rows per wait for 1,000 waits of one key, nested loops only ($statistics, promotes $promotes)',
    async ({ statistics, promotes }) => {
      const engine = testEngine(db().url, { workflows: [planAlone, planChained] });
      await engine.migrate();
      const tables = ['causeway_tasks', 'causeway_workflows', 'causeway_events'];
      if (statistics === 'never analyzed') {
        for (const table of tables) {
          await query(db().url, `alter table ${table} set (autovacuum_enabled = false)`);
        }
      }
      const prefix = `${statistics === 'analyzed' ? 'a' : 'n'}${promotes ? 'p' : 'n'}`;
      const kind = (index: number) =>
        promotes && index % 2 === 1 ? planChained.name : planAlone.name;
      const warmup = Array.from({ length: 6 }, (_, i) => `${prefix}-warm-${i}`);
      await engine.submitMany(warmup.map((key, index) => ({ name: kind(index), input: { key } })));
      const fn = eventSendFunction(engine.db, eventSendShapeOf(engine.definitions), promotes);
      const client = new pg.Client({ connectionString: db().url });
      await client.connect();
      try {
        await client.query(fn.createText);
        await client.query('set enable_hashjoin = off');
        await client.query('set enable_mergejoin = off');
        // The connection's plans, made now: the tables hold a few rows.
        for (const key of warmup) await client.query(fn.callText, parameters(key));
        await engine.submitMany(
          Array.from({ length: planWaitCount }, (_, index) => ({
            name: kind(index),
            input: { key: `${prefix}-all` },
          })),
        );
        if (statistics === 'analyzed') await client.query('analyze');
        await client.query(`load 'auto_explain'`);
        for (const setting of [
          'log_min_duration = 0',
          'log_analyze = on',
          'log_timing = off',
          'log_nested_statements = on',
          'log_format = json',
          'log_level = notice',
        ]) {
          await client.query(`set auto_explain.${setting}`);
        }
        const plans: PlanNode[] = [];
        client.on('notice', (notice) => {
          const text = notice.message ?? '';
          const start = text.indexOf('{');
          if (start >= 0) plans.push((JSON.parse(text.slice(start)) as { Plan: PlanNode }).Plan);
        });
        const { rows } = await client.query(fn.callText, parameters(`${prefix}-all`));
        expect(rows).toHaveLength(planWaitCount);
        // The function's own statements, and the call.
        expect(plans.length).toBeGreaterThan(10);
        const total = plans.reduce((sum, plan) => sum + rowsRead(plan), 0);
        expect(total).toBeLessThan(planRowsPerWait * planWaitCount);
      } finally {
        await client.end();
        for (const table of tables)
          await query(db().url, `alter table ${table} reset (autovacuum_enabled)`);
      }
      await expectSendCompleted(db().url, prefix, planWaitCount + warmup.length, promotes);
    },
  );
});

/** The send functions in the temporary schema of the engine's connection (its pool of one). */
async function ownSendFunctions(engine: Engine): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from pg_proc
    where pronamespace = pg_my_temp_schema() and proname like 'causeway_event_send_%'`.execute(
    engine.db,
  );
  return rows[0]?.n ?? -1;
}

describe('the send function on a connection', () => {
  it('is made by each connection for itself, again after the connection is cut, and never in a schema', async () => {
    const engine = testEngine(db().url, { workflows: [planAlone], poolSize: 1 });
    await engine.migrate();
    const keys = ['life-1', 'life-2', 'life-3'];
    await engine.submitMany(keys.map((key) => ({ name: planAlone.name, input: { key } })));
    expect(await ownSendFunctions(engine)).toBe(0);
    expect((await engine.sendEvent(planApproval.name, 'life-1', {})).tasks).toHaveLength(1);
    expect(await ownSendFunctions(engine)).toBe(1);
    const [{ pid }] = (
      await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(engine.db)
    ).rows as [{ pid: number }];
    await query(db().url, 'select pg_terminate_backend($1)', [pid]);
    // The signal only asks the backend to end: a statement can still reach it until it has.
    // A cut connection fails the next statement on it, and the pool then opens another.
    await waitFor(
      async () => {
        const backend = await sql<{ pid: number }>`select pg_backend_pid() as pid`
          .execute(engine.db)
          .catch(() => undefined);
        return backend !== undefined && backend.rows[0]?.pid !== pid;
      },
      { description: 'the engine on a new server connection' },
    );
    expect(await ownSendFunctions(engine)).toBe(0);
    expect((await engine.sendEvent(planApproval.name, 'life-2', {})).tasks).toHaveLength(1);
    expect(await ownSendFunctions(engine)).toBe(1);
    const inSchemas = await query(
      db().url,
      `select n.nspname from pg_proc as p join pg_namespace as n on n.oid = p.pronamespace
       where p.proname like 'causeway_event_send_%' and n.nspname not like 'pg_temp_%'`,
    );
    expect(inSchemas).toEqual([]);
    expect(await logMismatches(db().url)).toEqual([]);
  });

  it('leaves the send to the statement where the server connection lacks it, as behind a pooler', async () => {
    const engine = testEngine(db().url, { workflows: [planAlone], poolSize: 1 });
    await engine.migrate();
    const keys = ['lost-1', 'lost-2', 'lost-3'];
    await engine.submitMany(keys.map((key) => ({ name: planAlone.name, input: { key } })));
    expect((await engine.sendEvent(planApproval.name, 'lost-1', {})).tasks).toHaveLength(1);
    // The engine's connection believes it made the function; the server connection lacks it.
    const { rows } = await sql<{ name: string }>`
      select proname as name from pg_proc
      where pronamespace = pg_my_temp_schema() and proname like 'causeway_event_send_%'`.execute(
      engine.db,
    );
    expect(rows).toHaveLength(1);
    await sql.raw(`drop function pg_temp.${rows[0]?.name}`).execute(engine.db);
    const answer = await engine.sendEvent(planApproval.name, 'lost-2', { late: true });
    expect(answer.tasks.map((task) => task.state)).toEqual(['succeeded']);
    expect((await engine.sendEvent(planApproval.name, 'lost-3', {})).tasks).toHaveLength(1);
    expect(await ownSendFunctions(engine)).toBe(1);
    const outputs = await query<{ output: unknown }>(
      db().url,
      `select t.output from causeway_tasks as t join causeway_workflows as w on w.id = t.workflow_id
       where w.input->>'key' = 'lost-2'`,
    );
    expect(outputs).toEqual([{ output: { late: true } }]);
    expect(await logMismatches(db().url)).toEqual([]);
  });

  it('is not made behind a transaction pooler (preparedStatements: false): the statement sends', async () => {
    const engine = testEngine(db().url, {
      workflows: [planAlone],
      poolSize: 1,
      preparedStatements: false,
    });
    await engine.migrate();
    await engine.submit(planAlone.name, { key: 'pooled' });
    expect((await engine.sendEvent(planApproval.name, 'pooled', {})).tasks).toHaveLength(1);
    expect(await ownSendFunctions(engine)).toBe(0);
  });
});
