import type pg from 'pg';

/**
 * A drain as Causeway's transition log tells it, in database time (epoch ms, to the µs): an
 * edge's `at` is the start of the transaction that wrote it, so the span runs from the start of
 * the first claim to the start of the last settle (whose commit comes a little later).
 */
export interface DrainSpan {
  /** The first `lease_acquired` edge of the workflows' tasks. */
  readonly firstLeaseAt: number;
  /** The last edge that ended one of their tasks. */
  readonly lastEndAt: number;
  /** Task edges into a terminal state. */
  readonly ends: number;
  /** Workflows ÷ (lastEndAt − firstLeaseAt), per second. */
  readonly workflowsPerS: number;
}

/** Epoch milliseconds of a timestamptz, as SQL that pg hands back as a number. */
export const epochMsSql = (column: string) => `(extract(epoch from ${column}) * 1000)::float8`;

const terminal = `tr.to_state in ('succeeded', 'dead', 'cancelled')`;

/** The drain of the workflows named `name`, or of the children of workflow `parentId`. */
export async function drainSpan(
  pool: pg.Pool,
  which: { readonly name: string } | { readonly parentId: string },
): Promise<DrainSpan> {
  const filter = 'name' in which ? 'w.name = $1' : 'w.parent_workflow_id = $1::uuid';
  const { rows } = await pool.query<{
    workflows: number;
    first_lease_at: number | null;
    last_end_at: number | null;
    ends: number;
  }>(
    `with w as (select w.id from causeway_workflows as w where ${filter})
     select (select count(*) from w)::int as workflows,
            ${epochMsSql(`min(tr.at) filter (where tr.reason = 'lease_acquired')`)} as first_lease_at,
            ${epochMsSql(`max(tr.at) filter (where ${terminal})`)} as last_end_at,
            count(*) filter (where ${terminal})::int as ends
       from causeway_transitions as tr
      where tr.workflow_id = any(array(select id from w)) and tr.task_id is not null`,
    ['name' in which ? which.name : which.parentId],
  );
  const row = rows[0];
  const firstLeaseAt = row?.first_lease_at ?? Number.NaN;
  const lastEndAt = row?.last_end_at ?? Number.NaN;
  return {
    firstLeaseAt,
    lastEndAt,
    ends: row?.ends ?? 0,
    workflowsPerS: (row?.workflows ?? 0) / ((lastEndAt - firstLeaseAt) / 1000),
  };
}
