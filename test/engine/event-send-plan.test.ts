/**
 * The one-statement send's plans at scale, counted rather than timed: each of its texts (one
 * event or a batch, with or without the promotion part) completing 1,000 waits (with
 * promotions, half of them making a step ready) must make the executor produce a bounded
 * number of rows per wait over all plan nodes, with the plan PostgreSQL caches after five
 * executions (generic) and with the plans before it (custom), and with every join a nested
 * loop. A batch sends 1,000 events, one for each wait; one event has 1,000 waits for its key.
 * The planner picks a nested loop for a join of two of the statement's CTEs when it estimates
 * one row on each side (it did, for a running database's statistics); such a loop reads every
 * row of one side for each row of the other, a million rows here, where the bound is 200,000.
 * Forcing nested loops makes every such join show, whatever the statistics: the statement must
 * have none. */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { arrayLiteral } from '../../packages/engine/src/db/array-literal';
import { eventSendStatementText } from '../../packages/engine/src/db/events/event-send-statement';
import { eventSendShapeOf } from '../../packages/engine/src/runtime/events/one-statement-send';
import { useTestDatabase } from '../helpers/database';
import { testEngine } from '../helpers/engine';
import {
  expectSendCompleted,
  planAlone,
  planApproval,
  planChained,
  planRowsPerWait,
  planWaitCount,
} from './fixtures/event-plan-workflows';

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Actual Rows': number;
  readonly 'Actual Loops': number;
  readonly Plans?: readonly PlanNode[];
}

/** Rows every node produced, over all its loops, and the node that produced the most. */
function rowsProduced(node: PlanNode): { total: number; most: { node: string; rows: number } } {
  const own = node['Actual Rows'] * node['Actual Loops'];
  let total = own;
  let most = { node: node['Node Type'], rows: own };
  for (const child of node.Plans ?? []) {
    const below = rowsProduced(child);
    total += below.total;
    if (below.most.rows > most.rows) most = below.most;
  }
  return { total, most };
}

/**
 * The statement's ten parameters for these events (text, as the engine sends them): one
 * event's values, or a batch's array literals.
 */
function parameters(keys: readonly string[], single: boolean): (string | null)[] {
  const ids = keys.map(() => randomUUID());
  const columns = [
    ids,
    keys.map(() => planApproval.name),
    keys,
    keys.map(() => '{"ok":true}'),
    keys.map(() => null),
    keys.map(() => null),
    keys.map(() => '{"ok":true}'),
    ids.map((id) => JSON.stringify({ eventId: id })),
  ];
  return [
    ...columns.map((column) => (single ? (column[0] ?? null) : arrayLiteral(column))),
    'client',
    'client',
  ];
}

const db = useTestDatabase();

const cases = (['force_generic_plan', 'force_custom_plan'] as const).flatMap((mode) =>
  [true, false].flatMap((single) => [true, false].map((promotes) => ({ mode, single, promotes }))),
);

describe('the one-statement send at scale', () => {
  it.each(cases)(
    'produces a bounded number of rows per wait for 1,000 waits, joins as nested loops ($mode, single $single, promotes $promotes)',
    async ({ mode, single, promotes }) => {
      const engine = testEngine(db().url, { workflows: [planAlone, planChained] });
      await engine.migrate();
      const prefix = `${mode === 'force_generic_plan' ? 'g' : 'c'}${single ? 's' : 'b'}${promotes ? 'p' : 'n'}`;
      const warmup = Array.from({ length: 6 }, (_, i) => `${prefix}-warm-${i}`);
      // A batch: one event for each of 1,000 waits; one event: 1,000 waits for its key.
      const waits = Array.from({ length: planWaitCount }, (_, i) =>
        single ? `${prefix}-all` : `${prefix}-${i}`,
      );
      // With promotions, every other workflow has a step the event makes ready.
      const kind = (index: number) =>
        promotes && index % 2 === 1 ? planChained.name : planAlone.name;
      await engine.submitMany(
        [...warmup, ...waits].map((key, index) => ({ name: kind(index), input: { key } })),
      );
      const text = eventSendStatementText(engine.db, eventSendShapeOf(engine.definitions), {
        single,
        promotes,
      });
      const client = new pg.Client({ connectionString: db().url });
      await client.connect();
      try {
        await client.query(`set plan_cache_mode = ${mode}`);
        await client.query('set enable_hashjoin = off');
        await client.query('set enable_mergejoin = off');
        await client.query(`prepare send as ${text}`);
        const execute = (values: readonly (string | null)[]) =>
          `execute send(${values.map((value) => (value === null ? 'null' : client.escapeLiteral(value))).join(', ')})`;
        for (const key of warmup) await client.query(execute(parameters([key], single)));
        const sent = single ? [`${prefix}-all`] : waits;
        const { rows } = await client.query(
          `explain (analyze, format json) ${execute(parameters(sent, single))}`,
        );
        const plan = (rows[0] as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0]?.Plan;
        if (plan === undefined) throw new Error('no plan');
        const { total, most } = rowsProduced(plan);
        expect(total, `the most rows: ${most.rows} from a ${most.node}`).toBeLessThan(
          planRowsPerWait * planWaitCount,
        );
      } finally {
        await client.end();
      }
      // The send did its work: every wait completed, every chained step made ready.
      await expectSendCompleted(db().url, prefix, planWaitCount + warmup.length, promotes);
    },
  );
});
