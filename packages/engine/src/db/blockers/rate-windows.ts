import type { RateFacts, RateLimit } from '@causeway/workflow/internal';
import { sql } from 'kysely';
import { arrayLiteral } from '../array-literal';
import type { Db } from '../database';

/** What a task spends of a rate limit, as stored: key '' is the name's one bucket. */
export interface RateSpend {
  readonly name: string;
  readonly key: string;
  readonly cost: number;
}

/** The key of a name, key and cost in `rateWindowList`'s answer. */
export function rateSpendKey(spend: RateSpend): string {
  return `${spend.name}\u0000${spend.key}\u0000${spend.cost}`;
}

/**
 * The window of each (name, key) that `spends` name, at database time `now` (R51), by the
 * windows' primary key: the cost granted within the last period, when a grant of each cost
 * next fits (`causeway_rate_next_at`, or later if the last claim left the key blocked longer:
 * claims pass a blocked key until then), and its pause with the pausing task's workflow. The
 * limits and periods are the engine's (`limits`); for a name it does not declare, only what
 * the row says: the pause, and how long the last claim left the key blocked.
 */
export async function rateWindowList(
  db: Db,
  spends: readonly RateSpend[],
  limits: readonly RateLimit[],
  now: Date,
): Promise<Map<string, RateFacts>> {
  const facts = new Map<string, RateFacts>();
  if (spends.length === 0) return facts;
  const { rows } = await sql<{
    name: string;
    key: string;
    cost: number;
    rate_limit: number | null;
    period_ms: number | null;
    spent: number | null;
    next_at: Date | null;
    paused_until: Date | null;
    paused_by_task: string | null;
    paused_reason: string | null;
    paused_by_workflow: string | null;
  }>`
    select k.name, k.key, k.cost, d.rate_limit, d.period_ms, s.spent,
      nullif(greatest(
        case when d.name is not null then causeway_rate_next_at(
          s.spent_at, s.spent_cost, d.period_ms, d.rate_limit, k.cost) end,
        case when w.blocked_until > n.now then w.blocked_until end,
        '-infinity'::timestamptz), '-infinity') as next_at,
      w.paused_until, w.paused_by_task::text as paused_by_task, w.paused_reason,
      p.workflow_id::text as paused_by_workflow
    from unnest(
      ${arrayLiteral(spends.map((spend) => spend.name))}::text[],
      ${arrayLiteral(spends.map((spend) => spend.key))}::text[],
      ${arrayLiteral(spends.map((spend) => spend.cost))}::integer[]
    ) as k(name, key, cost)
    cross join (select ${now.toISOString()}::timestamptz as now) as n
    join causeway_rate_windows as w on w.name = k.name and w.key = k.key
    left join unnest(
      ${arrayLiteral(limits.map((limit) => limit.name))}::text[],
      ${arrayLiteral(limits.map((limit) => limit.limit))}::integer[],
      ${arrayLiteral(limits.map((limit) => limit.periodMs))}::integer[]
    ) as d(name, rate_limit, period_ms) on d.name = k.name
    left join lateral (
      select coalesce(array_agg(g.at order by g.at), '{}') as spent_at,
        coalesce(array_agg(g.cost order by g.at), '{}') as spent_cost,
        coalesce(sum(g.cost), 0)::integer as spent
      from unnest(w.spent_at, w.spent_cost) as g(at, cost)
      where g.at > n.now - d.period_ms * interval '1 millisecond'
      having d.name is not null
    ) as s on true
    left join causeway_tasks as p on p.id = w.paused_by_task`.execute(db);
  for (const row of rows) {
    facts.set(rateSpendKey(row), {
      name: row.name,
      key: row.key === '' ? null : row.key,
      cost: row.cost,
      limit: row.rate_limit,
      periodMs: row.period_ms,
      spent: row.spent,
      nextSlotAt: row.next_at,
      pause:
        row.paused_until === null
          ? null
          : {
              until: row.paused_until,
              byTask: row.paused_by_task,
              byWorkflow: row.paused_by_workflow,
              reason: row.paused_reason,
            },
    });
  }
  return facts;
}
