import type { RateLimit } from '@causeway/workflow';
import { sql } from 'kysely';
import { arrayLiteral } from '../array-literal';
import type { Db } from '../database';

/** One key of a rate limit (R51) as operators see it, on the database clock. */
export interface RateKeyState {
  /** Null: the name's one bucket (a step that gives no key). */
  readonly key: string | null;
  /** The cost of its grants within the period before now. */
  readonly spent: number;
  /** When a grant of cost 1 next fits; null when one fits now (a pause aside). */
  readonly nextSlotAt: Date | null;
  /** Until when a step of the key that heard "too busy" paused it; null when not paused. */
  readonly pausedUntil: Date | null;
  /** The task whose step paused it. */
  readonly pausedByTask: string | null;
  /** That task's workflow, while the task is still stored. */
  readonly pausedByWorkflow: string | null;
  /** What the step said (`StepError('throttled', reason, …)`). */
  readonly pausedReason: string | null;
}

/** A declared rate limit's live keys: the totals over all of them and the busiest few. */
export interface RateLimitState {
  readonly name: string;
  readonly limit: number;
  readonly periodMs: number;
  /** Keys with a grant within the period, or paused. */
  readonly keys: number;
  /** The cost granted within the period before now, over all its keys. */
  readonly spent: number;
  /** Keys that no grant fits now: spent until later, or paused. */
  readonly limitedKeys: number;
  /** The keys that spent most, then the paused ones, then by key; at most the number asked. */
  readonly busiest: readonly RateKeyState[];
}

/**
 * Every declared limit's state in one statement at the database's `causeway_now()`: each
 * key's spend counts only the grants within the period before now (a row keeps those of the
 * last claim's period), and its next slot is the later of what `causeway_rate_next_at` says of
 * those grants and what the last claim left (its next task may cost more than 1). Limits and
 * periods come from the engine: the database keeps only grants. Listed in declaration order.
 */
export async function rateLimitStateList(
  db: Db,
  limits: readonly RateLimit[],
  keysShown: number,
): Promise<RateLimitState[]> {
  if (limits.length === 0) return [];
  const { rows } = await sql<{
    name: string;
    rate_limit: number;
    period_ms: number;
    keys: number;
    spent: number;
    limited_keys: number;
    busiest: {
      key: string;
      spent: number;
      next_slot_at: string | null;
      paused_until: string | null;
      paused_by_task: string | null;
      paused_by_workflow: string | null;
      paused_reason: string | null;
    }[];
  }>`
    with clock as (select causeway_now() as now),
    declared as (
      select d.name, d.rate_limit, d.period_ms, d.position
      from unnest(
        ${arrayLiteral(limits.map((limit) => limit.name))}::text[],
        ${arrayLiteral(limits.map((limit) => limit.limit))}::integer[],
        ${arrayLiteral(limits.map((limit) => limit.periodMs))}::integer[]
      ) with ordinality as d(name, rate_limit, period_ms, position)
    ),
    windows as (
      select w.name, w.key, d.rate_limit, d.period_ms, g.spent, g.spent_at, g.spent_cost,
        w.blocked_until, w.paused_by_task, w.paused_reason,
        case when w.paused_until > c.now then w.paused_until end as paused_until, c.now
      from declared as d
      cross join clock as c
      join causeway_rate_windows as w on w.name = d.name
      cross join lateral (
        select coalesce(sum(s.cost), 0)::int as spent,
          coalesce(array_agg(s.at order by s.at), '{}') as spent_at,
          coalesce(array_agg(s.cost order by s.at), '{}') as spent_cost
        from unnest(w.spent_at, w.spent_cost) as s(at, cost)
        where s.at > c.now - d.period_ms * interval '1 millisecond'
      ) as g
    ),
    live as (
      select w.*, greatest(case when w.blocked_until > w.now then w.blocked_until end,
          causeway_rate_next_at(w.spent_at, w.spent_cost, w.period_ms, w.rate_limit, 1))
          as next_slot_at
      from windows as w
      where w.spent > 0 or w.paused_until is not null
    ),
    ranked as (
      select l.*, row_number() over (partition by l.name
          order by l.spent desc, l.paused_until is not null desc, l.key) as rank
      from live as l
    ),
    totals as (
      select name, count(*)::int as keys, sum(spent)::int as spent,
        (count(*) filter (where next_slot_at is not null or paused_until is not null))::int
          as limited_keys
      from live group by name
    )
    select d.name, d.rate_limit, d.period_ms, coalesce(t.keys, 0) as keys,
      coalesce(t.spent, 0) as spent, coalesce(t.limited_keys, 0) as limited_keys,
      coalesce(b.busiest, '[]'::json) as busiest
    from declared as d
    left join totals as t on t.name = d.name
    left join lateral (
      select json_agg(json_build_object('key', r.key, 'spent', r.spent,
          'next_slot_at', r.next_slot_at, 'paused_until', r.paused_until,
          'paused_by_task', case when r.paused_until is not null then r.paused_by_task end,
          'paused_by_workflow', case when r.paused_until is not null then p.workflow_id end,
          'paused_reason', case when r.paused_until is not null then r.paused_reason end)
          order by r.rank) as busiest
      from ranked as r
      left join causeway_tasks as p on p.id = r.paused_by_task
      where r.name = d.name and r.rank <= ${keysShown}
    ) as b on true
    order by d.position`.execute(db);
  const date = (at: string | null) => (at === null ? null : new Date(at));
  return rows.map((row) => ({
    name: row.name,
    limit: row.rate_limit,
    periodMs: row.period_ms,
    keys: row.keys,
    spent: row.spent,
    limitedKeys: row.limited_keys,
    busiest: row.busiest.map((key) => ({
      key: key.key === '' ? null : key.key,
      spent: key.spent,
      nextSlotAt: date(key.next_slot_at),
      pausedUntil: date(key.paused_until),
      pausedByTask: key.paused_by_task,
      pausedByWorkflow: key.paused_by_workflow,
      pausedReason: key.paused_reason,
    })),
  }));
}
