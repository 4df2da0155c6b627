import type { RateLimit } from '@causeway/workflow';
import { query } from '../helpers/engine';

/**
 * The windows of the log that hold more than their limit (R51), read from the log alone, on
 * database time: for each lease of a task that spends a limit, the cost of the leases of its
 * name and key within the period up to it, `(at − period, at]`. Any window of the period holds
 * most when it ends at a lease, so these are all the windows there are to check. Written from
 * the contract, not from the engine's windows.
 */
export async function rateWindowOverflows(
  databaseUrl: string,
  limits: readonly RateLimit[],
): Promise<{ name: string; key: string; at: string; cost: number; limit: number }[]> {
  return query(
    databaseUrl,
    `with lease as (
       select t.rate_name as name, t.rate_key as key, t.rate_cost as cost, l.at
       from causeway_transitions as l join causeway_tasks as t on t.id = l.task_id
       where l.reason = 'lease_acquired' and t.rate_name is not null
     ),
     declared as (
       select * from unnest($1::text[], $2::integer[], $3::integer[]) as d(name, lim, period_ms)
     )
     select e.name, e.key, e.at::text as at, w.cost::int as cost, d.lim as limit
     from (select distinct name, key, at from lease) as e
     join declared as d on d.name = e.name
     cross join lateral (
       select sum(o.cost) as cost from lease as o
       where o.name = e.name and o.key = e.key
         and o.at > e.at - d.period_ms * interval '1 millisecond' and o.at <= e.at
     ) as w
     where w.cost > d.lim
     order by e.name, e.key, e.at`,
    [limits.map((l) => l.name), limits.map((l) => l.limit), limits.map((l) => l.periodMs)],
  );
}
