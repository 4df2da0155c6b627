/**
 * The one-statement send's plan at scale, counted rather than timed: a batch of 1,000 events,
 * each completing a wait (half of them making a step ready), must make the executor produce a
 * bounded number of rows per event over all plan nodes, with the plan PostgreSQL caches after
 * five executions (generic) and with the plans before it (custom), and with every join a
 * nested loop. The planner picks a nested loop for a join of two of the statement's CTEs when
 * it estimates one row on each side (it did, for a running database's statistics); such a loop
 * reads every row of one side for each row of the other, a million rows for this batch, where
 * the bound is 200,000. Forcing nested loops makes every such join show, whatever the
 * statistics: the statement must have none.
 */
import { randomUUID } from 'node:crypto';
import { workflow } from '@causeway/workflow';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { arrayLiteral } from '../../packages/engine/src/db/array-literal';
import { eventSendStatementText } from '../../packages/engine/src/db/events/event-send-statement';
import { eventSendShapeOf } from '../../packages/engine/src/runtime/events/one-statement-send';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';

const input = z.object({ key: z.string() });
const approval = {
  name: 'plan.approved',
  key: (ctx: { readonly input: z.infer<typeof input> }) => ctx.input.key,
  timeoutMs: 86_400_000,
};
const alone = workflow({ name: 'plan-alone', input }).event('approval', approval).build();
const chained = workflow({ name: 'plan-chained', input })
  .event('approval', approval)
  .step('publish', { after: ['approval'], queue: 'q-plan', run: () => null })
  .build();

const batch = 1_000;
const rowsPerEvent = 200;

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

/** The statement's ten parameters for these events (text, as the engine sends them). */
function parameters(keys: readonly string[]): string[] {
  const ids = keys.map(() => randomUUID());
  return [
    arrayLiteral(ids),
    arrayLiteral(keys.map(() => approval.name)),
    arrayLiteral(keys),
    arrayLiteral(keys.map(() => '{"ok":true}')),
    arrayLiteral(keys.map(() => null)),
    arrayLiteral(keys.map(() => null)),
    arrayLiteral(keys.map(() => '{"ok":true}')),
    arrayLiteral(ids.map((id) => JSON.stringify({ eventId: id }))),
    'client',
    'client',
  ];
}

const db = useTestDatabase();

describe('the one-statement send at scale', () => {
  it.each(['force_generic_plan', 'force_custom_plan'])(
    'produces a bounded number of rows per event for a batch of 1,000, joins as nested loops (%s)',
    async (mode) => {
      const engine = testEngine(db().url, { workflows: [alone, chained] });
      await engine.migrate();
      const prefix = mode === 'force_generic_plan' ? 'g' : 'c';
      const warmup = Array.from({ length: 6 }, (_, i) => `${prefix}-warm-${i}`);
      const keys = Array.from({ length: batch }, (_, i) => `${prefix}-${i}`);
      // Every other workflow has a step the event makes ready.
      await engine.submitMany(
        [...warmup, ...keys].map((key, index) => ({
          name: index % 2 === 0 ? 'plan-alone' : 'plan-chained',
          input: { key },
        })),
      );
      const text = eventSendStatementText(engine.db, eventSendShapeOf(engine.definitions));
      const client = new pg.Client({ connectionString: db().url });
      await client.connect();
      try {
        await client.query(`set plan_cache_mode = ${mode}`);
        await client.query('set enable_hashjoin = off');
        await client.query('set enable_mergejoin = off');
        await client.query(`prepare send as ${text}`);
        const execute = (values: readonly string[]) =>
          `execute send(${values.map((value) => client.escapeLiteral(value)).join(', ')})`;
        for (const key of warmup) await client.query(execute(parameters([key])));
        const { rows } = await client.query(
          `explain (analyze, format json) ${execute(parameters(keys))}`,
        );
        const plan = (rows[0] as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0]?.Plan;
        if (plan === undefined) throw new Error('no plan');
        const { total, most } = rowsProduced(plan);
        expect(total, `the most rows: ${most.rows} from a ${most.node}`).toBeLessThan(
          rowsPerEvent * batch,
        );
      } finally {
        await client.end();
      }
      // The batch did its work: every wait completed, every chained step made ready.
      const states = await query<{ step: string; state: string; n: number }>(
        db().url,
        `select t.step, t.state, count(*)::int as n from causeway_tasks as t
          join causeway_workflows as w on w.id = t.workflow_id
          where w.input->>'key' like $1 group by 1, 2 order by 1, 2`,
        [`${prefix}-%`],
      );
      expect(states).toEqual([
        { step: 'approval', state: 'succeeded', n: batch + warmup.length },
        { step: 'publish', state: 'queued', n: (batch + warmup.length) / 2 },
      ]);
      expect(await logMismatches(db().url)).toEqual([]);
    },
  );
});
