/**
 * R55: the workflow list filtered by attributes beside 1,000,000 workflows. Each has a tenant
 * (one of 100, 10,000 workflows each), one in 100,000 a rare `audit` attribute, one in 1,000 a
 * `tier` whose value is the number 5 for half of them and the string "5" for the others. A
 * common tenant, the rare attribute, both together, the typed tier and a tenant with a state
 * each answer what a plain scan of the workflows' jsonb answers, page after page, through the
 * attribute rows' primary key: no Seq Scan, and a first page reads about a page of rows, not
 * the tenant's 10,000. The rows are written in SQL (not through the engine) so this takes
 * seconds; the plans are read with EXPLAIN ANALYZE (rows, never times).
 */
import type { WorkflowAttributes } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { attributePageQuery } from '../../packages/engine/src/db/reads/attribute-page';
import {
  type WorkflowKey,
  type WorkflowOrder,
  workflowCountRead,
  workflowPageRead,
} from '../../packages/engine/src/db/reads/workflow-page';
import { query } from '../helpers/engine';
import { usePlanDatabase } from '../helpers/plan-database';
import { analyzedReads } from '../helpers/query-plans';

const historySize = 1_000_000;
const pageSize = 50;

const workflowsSql = `
insert into causeway_workflows (id, name, state, input, created_at, updated_at, attributes)
select lpad(to_hex(g), 32, '0')::uuid, 'billing',
       case when g % 1000 = 3 then 'dead' else 'succeeded' end, '{}',
       timestamptz '2026-01-01 00:00:00+00' + g * interval '1 second', now(),
       jsonb_build_object('tenant', 't' || (g % 100))
         || case when g % 100000 = 7 then '{"audit": true}'::jsonb else '{}'::jsonb end
         || case when g % 1000 = 11 then '{"tier": 5}'::jsonb
                 when g % 1000 = 12 then '{"tier": "5"}'::jsonb else '{}'::jsonb end
  from generate_series(1, $1::int) g`;
const attributeRowsSql = `
insert into causeway_workflow_attributes (term, created_at, workflow_id)
select causeway_attribute_term(a.key, a.value), w.created_at, w.id
  from causeway_workflows w, jsonb_each(w.attributes) a`;

const { url, db } = usePlanDatabase(async (databaseUrl) => {
  await query(databaseUrl, workflowsSql, [historySize]);
  await query(databaseUrl, attributeRowsSql);
});

const analyzed = (compiled: { sql: string; parameters: readonly unknown[] }) =>
  analyzedReads(url(), compiled);

/** The same page from the workflows' jsonb alone (`@>` keeps types apart, as terms do). */
async function plainPage(
  attributes: WorkflowAttributes,
  states: readonly string[] | undefined,
  order: WorkflowOrder,
  after: WorkflowKey | null,
): Promise<string[]> {
  const direction = order === 'newest_first' ? 'desc' : 'asc';
  const rows = await query<{ id: string }>(
    url(),
    `select id from causeway_workflows
      where attributes @> $1::jsonb and ($2::text[] is null or state = any($2))
        and ($3::timestamptz is null
             or (created_at, id) ${order === 'newest_first' ? '<' : '>'} ($3, $4::uuid))
      order by created_at ${direction}, id ${direction} limit ${pageSize}`,
    [JSON.stringify(attributes), states ?? null, after?.createdAt ?? null, after?.id ?? null],
  );
  return rows.map((row) => row.id);
}

const filters: {
  readonly label: string;
  readonly attributes: WorkflowAttributes;
  readonly states?: readonly string[];
  /** How many rows a page may read: a page's worth, plus its joins. */
  readonly maxRowsRead: number;
  /** No workflow matches. */
  readonly none?: true;
}[] = [
  { label: 'a common tenant', attributes: { tenant: 't42' }, maxRowsRead: 500 },
  { label: 'the rare attribute', attributes: { audit: true }, maxRowsRead: 200 },
  {
    label: 'a tenant and the rare one',
    attributes: { tenant: 't7', audit: true },
    maxRowsRead: 500,
  },
  { label: 'the number 5', attributes: { tier: 5 }, maxRowsRead: 500 },
  { label: 'the string "5"', attributes: { tier: '5' }, maxRowsRead: 500 },
  {
    label: 'a tenant, succeeded',
    attributes: { tenant: 't3' },
    states: ['succeeded'],
    maxRowsRead: 500,
  },
  // Every dead workflow is tenant t3's: t3's dead fill pages, t4 has none. Either way a page
  // reads the 1,000 dead workflows' rows (and their terms by key), not the tenant's 10,000.
  { label: 'a tenant, dead', attributes: { tenant: 't3' }, states: ['dead'], maxRowsRead: 3_000 },
  {
    label: 'a tenant without dead, dead',
    attributes: { tenant: 't4' },
    states: ['dead', 'cancelled'],
    maxRowsRead: 3_000,
    none: true,
  },
];
const orders: WorkflowOrder[] = ['newest_first', 'oldest_first'];

describe('the workflow list by attributes beside 1,000,000 workflows', () => {
  for (const filter of filters) {
    for (const order of orders) {
      it(`${filter.label}, ${order.replace('_', ' ')}: two pages through the attribute rows' key`, async () => {
        const filterRow = {
          attributes: filter.attributes,
          ...(filter.states === undefined ? {} : { states: filter.states }),
        };
        let after: WorkflowKey | null = null;
        for (let page = 0; page < 2; page += 1) {
          const ask = { filter: filterRow, order, after, limit: pageSize };
          const answer = await workflowPageRead(db(), ask);
          const expected = await plainPage(filter.attributes, filter.states, order, after);
          expect(answer.rows.map((row) => row.workflow.id)).toEqual(expected);
          if (page === 0) expect(expected.length > 0).toBe(filter.none !== true);
          const statement = attributePageQuery(ask);
          if (statement === null) throw new Error('a filter with attributes has a statement');
          const plan = await analyzed(statement.compile(db()));
          expect(plan.seqScans).toEqual([]);
          expect(plan.indexes).toContain('causeway_workflow_attributes_pkey');
          expect(plan.rowsRead).toBeLessThan(filter.maxRowsRead);
          if (!answer.hasMore) break;
          after = answer.rows.at(-1)?.key ?? null;
        }
      });
    }
  }

  it('counts no further than its cap', async () => {
    expect(await workflowCountRead(db(), { attributes: { tenant: 't42' } }, 10_001)).toBe(10_000);
    expect(await workflowCountRead(db(), { attributes: { tenant: 't42' } }, 500)).toBe(500);
    expect(await workflowCountRead(db(), { attributes: { audit: true } }, 10_001)).toBe(10);
    expect(await workflowCountRead(db(), { attributes: { tier: 5 } }, 10_001)).toBe(1_000);
  });
});
