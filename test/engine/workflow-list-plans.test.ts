/**
 * The workflow list beside 1,000,000 finished workflows: every state filter, in both orders,
 * on the first page and on the page after it, answers what a plain scan of the table answers,
 * and its plan reads a few rows per page (summed over every scan node, with EXPLAIN ANALYZE),
 * never a Seq Scan of the workflows and never the history: succeeded through the (created_at, id) index, the
 * rare states through their partial index, the live ones through the tasks' partial indexes.
 * The count stops at its cap. The rows are written in SQL (not through the engine) so the
 * history takes seconds.
 */
import { describe, expect, it } from 'vitest';
import {
  rareWorkflowStates,
  type WorkflowKey,
  type WorkflowOrder,
  workflowCountQuery,
  workflowPageQuery,
  workflowPageRead,
} from '../../packages/engine/src/db/reads/workflow-page';
import { query } from '../helpers/engine';
import { usePlanDatabase } from '../helpers/plan-database';
import { analyzedReads } from '../helpers/query-plans';

const historySize = 1_000_000;
const pageSize = 50;

/**
 * Workflow g (1..1,000,000) is created g seconds after 2026-01-01. One in 1,000 is dead, one
 * in 1,000 cancelled; one in 100,000 is queued and one in 100,000 cancel_requested, each with
 * a task in that state; the rest succeeded (they keep no tasks: the list never reads them).
 */
const historySql = `
insert into causeway_workflows (id, name, state, input, created_at, updated_at)
select lpad(to_hex(g), 32, '0')::uuid, case when g % 2 = 0 then 'even' else 'odd' end,
       case when g % 100000 = 5 then 'queued'
            when g % 100000 = 7 then 'cancel_requested'
            when g % 1000 = 3 then 'dead'
            when g % 1000 = 4 then 'cancelled'
            else 'succeeded' end,
       '{}', timestamptz '2026-01-01 00:00:00+00' + g * interval '1 second', now()
  from generate_series(1, $1::int) g`;
const liveTasksSql = `
insert into causeway_tasks (id, workflow_id, step, queue, state, attempt, max_attempts,
                            lease_epoch, run_at, created_at, updated_at)
select gen_random_uuid(), id, 'only', 'default', state, 0, 3, 0, now(), created_at, created_at
  from causeway_workflows where state in ('queued', 'cancel_requested')`;

const { url, db } = usePlanDatabase(async (databaseUrl) => {
  await query(databaseUrl, historySql, [historySize]);
  await query(databaseUrl, liveTasksSql);
}, 120_000);

const analyzed = (compiled: { sql: string; parameters: readonly unknown[] }) =>
  analyzedReads(url(), compiled);

/** The same page from a plain scan of the table. */
async function plainPage(
  states: readonly string[] | undefined,
  order: WorkflowOrder,
  after: WorkflowKey | null,
): Promise<string[]> {
  const direction = order === 'newest_first' ? 'desc' : 'asc';
  const rows = await query<{ id: string }>(
    url(),
    `select id from causeway_workflows
      where ($1::text[] is null or state = any($1))
        and ($2::timestamptz is null
             or (created_at, id) ${order === 'newest_first' ? '<' : '>'} ($2, $3::uuid))
      order by created_at ${direction}, id ${direction} limit ${pageSize}`,
    [states ?? null, after?.createdAt ?? null, after?.id ?? null],
  );
  return rows.map((row) => row.id);
}

/** Each filter, and the indexes of which its plan uses at least one. */
const filters: {
  readonly label: string;
  readonly states?: readonly string[];
  readonly indexes: readonly string[];
}[] = [
  { label: 'any state', indexes: ['causeway_workflows_created'] },
  { label: 'succeeded', states: ['succeeded'], indexes: ['causeway_workflows_created'] },
  { label: 'dead', states: ['dead'], indexes: ['causeway_workflows_rare_state'] },
  { label: 'cancelled', states: ['cancelled'], indexes: ['causeway_workflows_rare_state'] },
  {
    label: 'on call (dead, cancel_requested)',
    states: ['dead', 'cancel_requested'],
    indexes: ['causeway_workflows_rare_state'],
  },
  {
    // The live ids by primary key, or (with few) as an index condition of the ordered scan.
    label: 'live',
    states: ['queued', 'running', 'waiting'],
    indexes: ['causeway_workflows_pkey', 'causeway_workflows_created'],
  },
  {
    label: 'every state',
    states: ['queued', 'running', 'waiting', 'cancel_requested', 'succeeded', 'cancelled', 'dead'],
    indexes: ['causeway_workflows_rare_state'],
  },
];
const orders: WorkflowOrder[] = ['newest_first', 'oldest_first'];

describe('the workflow list beside 1,000,000 finished workflows', () => {
  for (const filter of filters) {
    for (const order of orders) {
      it(`${filter.label}, ${order.replace('_', ' ')}: two pages, each read through indexes`, async () => {
        const filterRow = filter.states === undefined ? {} : { states: filter.states };
        let after: WorkflowKey | null = null;
        for (let page = 0; page < 2; page += 1) {
          const ask = { filter: filterRow, order, after, limit: pageSize };
          const answer = await workflowPageRead(db(), ask);
          expect(answer.rows.map((row) => row.workflow.id)).toEqual(
            await plainPage(filter.states, order, after),
          );
          const plan = await analyzed(
            (
              workflowPageQuery(db(), ask) as NonNullable<ReturnType<typeof workflowPageQuery>>
            ).compile(),
          );
          // (This file keeps only the live workflows' tasks: a Seq Scan of that table is cheap.)
          expect(plan.seqScans.filter((table) => table !== 'causeway_tasks')).toEqual([]);
          expect(plan.indexes.filter((index) => filter.indexes.includes(index))).not.toEqual([]);
          // A page reads a few rows per arm, not the history (a rare state's rows are 1 in 1,000).
          expect(plan.rowsRead).toBeLessThan(2_000);
          if (!answer.hasMore) break;
          after = answer.rows.at(-1)?.key ?? null;
        }
      });
    }
  }

  it('keeps rare_state to the rare states the reads expect', async () => {
    const [column] = await query<{ expression: string }>(
      url(),
      `select pg_get_expr(d.adbin, d.adrelid) as expression from pg_attrdef d
         join pg_attribute a on a.attrelid = d.adrelid and a.attnum = d.adnum
        where d.adrelid = 'causeway_workflows'::regclass and a.attname = 'rare_state'`,
    );
    const named = [...(column?.expression ?? '').matchAll(/'([a-z_]+)'::text/g)].map((m) => m[1]);
    expect(named.sort()).toEqual([...rareWorkflowStates].sort());
  });

  it('counts no further than its cap', async () => {
    for (const filter of filters) {
      const filterRow = filter.states === undefined ? {} : { states: filter.states };
      const compiled = (
        workflowCountQuery(db(), filterRow, 10_001) as NonNullable<
          ReturnType<typeof workflowCountQuery>
        >
      ).compile();
      const [row] = await query<{ count: string }>(url(), compiled.sql, [...compiled.parameters]);
      const [exact] = await query<{ count: string }>(
        url(),
        `select count(*) from causeway_workflows where $1::text[] is null or state = any($1)`,
        [filter.states ?? null],
      );
      expect(Number(row?.count)).toBe(Math.min(Number(exact?.count), 10_001));
      const plan = await analyzed(compiled);
      expect(plan.rowsRead, filter.label).toBeLessThan(30_000);
    }
  });
});
