import { type RawBuilder, sql } from 'kysely';
import { constantArrayLiteral } from '../array-literal';

// Claims of tasks that spend a rate limit (R51). Each (limit name, key) has one row of its
// grants within the last period (`causeway_rate_windows`). A claim passes keys whose row says
// nothing fits until later (or is paused) without reading their tasks; of the tasks it would
// lease, it locks their keys' rows (in key order, so claims never deadlock on them), counts
// the cost of the grants within a period before its time, and takes, key by key in claim
// order, the tasks whose running cost fits. A claim whose time is earlier than a grant the
// row keeps (it read its clock, then waited for the lock) takes none of the key this round:
// grants are kept in time order, so dropping those older than a period never drops one a
// later claim still counts, and no window of the period holds more than the limit.

/** The engine's rate limits as the claim statement takes them: parallel arrays by name. */
export interface RateLimitPlan {
  readonly names: readonly string[];
  readonly limits: readonly number[];
  readonly periodsMs: readonly number[];
}

/** The columns of a candidate that say what it spends (null for a task that spends none). */
export function rateCandidateColumns(t: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`${t}.rate_name, ${t}.rate_key, ${t}.rate_cost`;
}

/**
 * A condition on task `t`: it spends no rate limit, or its key's row does not say that
 * nothing fits before `now`, nor that its key is paused.
 */
export function rateOpenSql(t: RawBuilder<unknown>, now: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(${t}.rate_name is null or not exists (
          select 1 from causeway_rate_windows as rw
          where rw.name = ${t}.rate_name and rw.key = ${t}.rate_key
            and greatest(rw.blocked_until, rw.paused_until) > ${now}))`;
}

/**
 * The CTEs that decide which of `wanted` (a CTE of tasks the claim would lease, with `id`,
 * `position` and the rate columns) fit their keys' windows at `now`; they lock the rows and
 * write nothing. `rate_passed` is `wanted` less the tasks that spend a limit and do not fit.
 */
export function rateFitCtes(
  plan: RateLimitPlan,
  wanted: RawBuilder<unknown>,
  now: RawBuilder<unknown>,
): RawBuilder<unknown> {
  return sql`
    rate_lock as materialized (
      select w.name, w.key, w.spent_at, w.spent_cost, w.paused_until
      from causeway_rate_windows as w
      where (w.name, w.key) in (
        select rate_name, rate_key from ${wanted} where rate_name is not null)
      order by w.name, w.key
      for update
    ),
    -- Each key's room: its limit less the cost of its grants within the period before now;
    -- none for a paused key, or one whose row keeps a grant later than now.
    rate_room as materialized (
      select l.name, l.key, l.spent_at, l.spent_cost, d.rate_limit, d.period_ms,
        d.rate_limit - (
          select coalesce(sum(s.cost), 0) from unnest(l.spent_at, l.spent_cost) as s(at, cost)
          where s.at > ${now} - d.period_ms * interval '1 millisecond') as room
      from rate_lock as l
      join unnest(
        ${constantArrayLiteral(plan.names)}::text[],
        ${constantArrayLiteral(plan.limits)}::integer[],
        ${constantArrayLiteral(plan.periodsMs)}::integer[]
      ) as d(name, rate_limit, period_ms) on d.name = l.name
      where (l.paused_until is null or l.paused_until <= ${now})
        and ${now} >= coalesce(l.spent_at[cardinality(l.spent_at)], '-infinity')
    ),
    -- Key by key in claim order, the tasks whose running cost fits its room.
    rate_fit as materialized (
      select w.id, w.rate_name, w.rate_key, w.rate_cost, w.position,
        sum(w.rate_cost) over (
          partition by w.rate_name, w.rate_key order by w.position
        ) <= r.room as fits
      from ${wanted} as w
      join rate_room as r on r.name = w.rate_name and r.key = w.rate_key
    ),
    rate_passed as materialized (
      select w.* from ${wanted} as w
      where w.rate_name is null
        or exists (select 1 from rate_fit as f where f.id = w.id and f.fits)
    ),`;
}

/**
 * The update that spends what `claimable` (the tasks the claim leases) cost, on each key
 * `rate_room` read: the grants within the period before `now`, then this claim's (its time,
 * its tasks' cost), and when the next grant could fit. A key whose tasks did not fit is
 * written too (nothing spent), so the next claims pass it until its next slot. Returns each
 * key's next slot, so the claimer can come back then rather than at its next poll.
 */
export function rateSpendCte(claimable: RawBuilder<unknown>, now: RawBuilder<unknown>) {
  return sql`rate_spend as (
      update causeway_rate_windows as w set
        spent_at = n.spent_at, spent_cost = n.spent_cost,
        blocked_until = causeway_rate_next_at(n.spent_at, n.spent_cost, r.period_ms,
          r.rate_limit, s.next_cost)
      from rate_room as r
      join (
        select f.rate_name, f.rate_key,
          coalesce(sum(f.rate_cost) filter (where c.id is not null), 0) as spent,
          coalesce((array_agg(f.rate_cost order by f.position) filter (where c.id is null))[1], 1)
            as next_cost
        from rate_fit as f left join ${claimable} as c on c.id = f.id
        group by f.rate_name, f.rate_key
      ) as s on s.rate_name = r.name and s.rate_key = r.key
      cross join lateral (
        select coalesce(array_agg(k.at order by k.at), '{}') || case when s.spent > 0
            then array[${now}]::timestamptz[] else '{}' end as spent_at,
          coalesce(array_agg(k.cost order by k.at), '{}') || case when s.spent > 0
            then array[s.spent]::integer[] else '{}' end as spent_cost
        from unnest(r.spent_at, r.spent_cost) as k(at, cost)
        where k.at > ${now} - r.period_ms * interval '1 millisecond'
      ) as n
      where w.name = r.name and w.key = r.key
      returning w.blocked_until
    )`;
}
