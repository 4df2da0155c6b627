/**
 * R55: the workflow list filtered by attributes beside 1,000,000 workflows. Each has a tenant
 * (one of 100, 10,000 workflows each), one in 100,000 a rare `audit` attribute, one in 1,000 a
 * `tier` whose value is the number 5 for half of them and the string "5" for the others, one
 * in 4 (and ten more) `plan: "pro"`. A common tenant, the rare attribute, both together, the
 * typed tier, a tenant with a state and a tenant with the plan each answer what a plain scan
 * of the workflows' jsonb answers, page after page, through the attribute rows' primary key:
 * no Seq Scan, and a first page reads about a page of rows, not the tenant's 10,000; a tenant
 * and the plan, which few workflows have together, read the tenant's rows, not the plan's. The rows are written in SQL (not through the engine) so this takes
 * seconds; the plans are read with EXPLAIN ANALYZE (rows, never times).
 */
import type { WorkflowAttributes } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import {
  rareStateWalk,
  sparsestTerm,
  sparsestTermQuery,
} from '../../packages/engine/src/db/reads/attribute-driver';
import {
  type AttributePageAsk,
  attributePageQuery,
  attributeTerms,
  rareStatesOnly,
  walkStart,
} from '../../packages/engine/src/db/reads/attribute-page';
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
         || case when g % 4 = 0 or g % 100000 = 41 then '{"plan": "pro"}'::jsonb
                 else '{}'::jsonb end
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

/**
 * What a page's statements read, run: with several attributes the one choosing the term to
 * walk (attribute-driver.ts) and then the page's; with one, the page's alone.
 */
async function pageReads(ask: AttributePageAsk, shape: 'page' | 'count' = 'page') {
  const terms = attributeTerms(ask.filter);
  const rare = rareStatesOnly(ask.filter);
  const walked = await sparsestTerm(db(), terms, walkStart(ask), rare);
  const statement = attributePageQuery(ask, shape, walked);
  if (statement === null) throw new Error('a filter with attributes has a statement');
  const plans = [await analyzed(statement.compile(db()))];
  if (terms.length > 1 || rare !== null) {
    plans.push(await analyzed(sparsestTermQuery(terms, walkStart(ask), rare).compile(db())));
  }
  return {
    walked,
    seqScans: plans.flatMap((plan) => plan.seqScans),
    indexes: [...new Set(plans.flatMap((plan) => plan.indexes))],
    rowsRead: plans.reduce((sum, plan) => sum + plan.rowsRead, 0),
  };
}

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
  // Each common (1 in 100, 1 in 4), together in 10 workflows: the tenant's 10,000 rows are
  // walked (and 200 of each term's to choose it), never the plan's 250,000, whichever is
  // named first.
  {
    label: 'two common values, few together',
    attributes: { plan: 'pro', tenant: 't41' },
    maxRowsRead: 11_000,
  },
  {
    label: 'two common values, few together, the other way round',
    attributes: { tenant: 't41', plan: 'pro' },
    maxRowsRead: 11_000,
  },
  // Every t40 workflow is pro: a page is found at once.
  {
    label: 'two common values, always together',
    attributes: { plan: 'pro', tenant: 't40' },
    maxRowsRead: 1_000,
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
  // The on-call's question for a tenant with nothing dead: its 10,000 rows walked to find no
  // page would read them all; the dead ones' partial index is sparser.
  {
    label: 'a tenant without dead, dead only',
    attributes: { tenant: 't5' },
    states: ['dead'],
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
          const plan = await pageReads(ask);
          expect(plan.seqScans).toEqual([]);
          expect(plan.indexes).toContain('causeway_workflow_attributes_pkey');
          expect(plan.rowsRead).toBeLessThan(filter.maxRowsRead);
          if (!answer.hasMore) break;
          after = answer.rows.at(-1)?.key ?? null;
        }
      });
    }
  }

  it('walks the rare states’ index when they are sparser than the terms, else a term', async () => {
    const ask = (attributes: WorkflowAttributes, states: string[]): AttributePageAsk => ({
      filter: { attributes, states },
      order: 'newest_first',
      after: null,
      limit: 20,
    });
    expect((await pageReads(ask({ tenant: 't5' }, ['dead']))).walked).toBe(rareStateWalk);
    expect((await pageReads(ask({ audit: true }, ['dead']))).walked).toBe(0);
    expect((await pageReads(ask({ tenant: 't5' }, ['succeeded']))).walked).toBe(0);
    expect(
      await workflowCountRead(db(), { attributes: { tenant: 't3' }, states: ['dead'] }, 10_001),
    ).toBe(1_000);
    expect(
      await workflowCountRead(db(), { attributes: { tenant: 't5' }, states: ['dead'] }, 10_001),
    ).toBe(0);
  });

  it('counts no further than its cap', async () => {
    expect(await workflowCountRead(db(), { attributes: { tenant: 't42' } }, 10_001)).toBe(10_000);
    expect(await workflowCountRead(db(), { attributes: { tenant: 't42' } }, 500)).toBe(500);
    expect(await workflowCountRead(db(), { attributes: { audit: true } }, 10_001)).toBe(10);
    expect(await workflowCountRead(db(), { attributes: { tier: 5 } }, 10_001)).toBe(1_000);
    const rarelyTogether = { plan: 'pro', tenant: 't41' };
    expect(await workflowCountRead(db(), { attributes: rarelyTogether }, 10_001)).toBe(10);
    const always = { plan: 'pro', tenant: 't40' };
    expect(await workflowCountRead(db(), { attributes: always }, 10_001)).toBe(10_000);
    expect(await workflowCountRead(db(), { attributes: always }, 500)).toBe(500);
    // Counting two terms walks the sparser one too: the tenant's 10,000 rows (twice when the
    // planner reads them through a bitmap, index then table), never the plan's 250,000.
    const ask = { filter: { attributes: rarelyTogether }, order: 'newest_first', after: null };
    const count = await pageReads({ ...ask, limit: 10_001 } as AttributePageAsk, 'count');
    expect(count.seqScans).toEqual([]);
    expect(count.rowsRead).toBeLessThan(21_000);
  });

  it('two values rarely together: walking the common one would read its every row', async () => {
    // What the choice avoids: the plan's 250,000 rows walked, each probed for the tenant.
    for (const attributes of [
      { plan: 'pro', tenant: 't41' },
      { tenant: 't41', plan: 'pro' },
    ]) {
      const ask: AttributePageAsk = {
        filter: { attributes },
        order: 'newest_first',
        after: null,
        limit: pageSize,
      };
      const chosen = await pageReads(ask);
      expect(Object.keys(attributes)[chosen.walked]).toBe('tenant');
      const common = attributePageQuery(ask, 'page', 1 - chosen.walked);
      if (common === null) throw new Error('a filter with attributes has a statement');
      const walkedCommon = await analyzed(common.compile(db()));
      expect(walkedCommon.rowsRead).toBeGreaterThan(250_000);
      expect(chosen.rowsRead).toBeLessThan(walkedCommon.rowsRead / 20);
    }
  });
});
