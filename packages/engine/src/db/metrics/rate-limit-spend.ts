import type { RateLimit } from '@causeway/workflow';
import { sql } from 'kysely';
import { arrayLiteral } from '../array-literal';

/** A declared rate limit's spend (R51), summed over its keys: never per key. */
export interface RateLimitSpend {
  readonly name: string;
  /** The cost granted within the period before now, over all its keys. */
  readonly spent: number;
  /** Keys no grant of cost 1 fits now (spent until later), or paused. */
  readonly limitedKeys: number;
}

/**
 * The spend of each limit the engine declares (their periods and limits are the engine's; the
 * database keeps only grants), on `causeway_now()`: a row for each declared limit, idle or not, in declaration order.
 */
export function rateLimitSpendSql(limits: readonly RateLimit[]) {
  return sql`
  select d.name, coalesce(sum(k.spent), 0)::int as spent,
    (count(*) filter (where k.limited))::int as "limitedKeys"
    from unnest(
      ${arrayLiteral(limits.map((limit) => limit.name))}::text[],
      ${arrayLiteral(limits.map((limit) => limit.limit))}::integer[],
      ${arrayLiteral(limits.map((limit) => limit.periodMs))}::integer[]
    ) with ordinality as d(name, rate_limit, period_ms, position)
    left join lateral (
      select g.spent, w.paused_until > causeway_now()
          or w.blocked_until > causeway_now()
          or causeway_rate_next_at(g.spent_at, g.spent_cost, d.period_ms, d.rate_limit, 1)
            is not null as limited
      from causeway_rate_windows as w
      cross join lateral (
        select coalesce(sum(s.cost), 0)::int as spent,
          coalesce(array_agg(s.at order by s.at), '{}') as spent_at,
          coalesce(array_agg(s.cost order by s.at), '{}') as spent_cost
        from unnest(w.spent_at, w.spent_cost) as s(at, cost)
        where s.at > causeway_now() - d.period_ms * interval '1 millisecond'
      ) as g
      where w.name = d.name and (g.spent > 0 or w.paused_until > causeway_now())
    ) as k on true
   group by d.name, d.position
   order by d.position`;
}
