-- R51: rate limits. What a task spends (the engine's limit by name, the key, the cost) is
-- fixed at admission; the key is '' when the step gives none (one bucket for the name). All
-- three are set or none.
alter table causeway_tasks
  add column rate_name text,
  add column rate_key text,
  add column rate_cost integer,
  add constraint causeway_tasks_rate check (
    (rate_name is null and rate_key is null and rate_cost is null)
    or (rate_name is not null and rate_key is not null and rate_cost >= 1));

-- One row per limit name and key that ever had a task: the grants of the last period. A claim
-- that grants tasks of the key locks the row, counts the cost of the grants within the period
-- before its own time, takes only what fits, and appends its grant (at its time, with its
-- total cost), dropping grants older than a period. Claims of one key are serialised by the
-- lock, and one whose time is earlier than a grant already kept takes none this round, so the
-- grants are kept in time order and no window of the period ever holds more than the limit.
-- - blocked_until: when the next grant could fit, as the last claim left the row (null: now);
--   claims pass a blocked key without reading its tasks' rows.
-- - paused_until, paused_by_task, paused_reason: a step of the key answered "too busy" with
--   a time to wait (`StepError('throttled', ..., { retryAfterMs })`): no grant until then.
create table causeway_rate_windows (
  name text not null,
  key text not null,
  spent_at timestamptz[] not null default '{}',
  spent_cost integer[] not null default '{}',
  blocked_until timestamptz,
  paused_until timestamptz,
  paused_by_task uuid,
  paused_reason text,
  primary key (name, key)
);

create function causeway_rate_window() returns trigger
  language plpgsql as $$
begin
  insert into causeway_rate_windows (name, key) values (new.rate_name, new.rate_key)
  on conflict (name, key) do nothing;
  return null;
end $$;

create trigger causeway_tasks_rate_window
  after insert on causeway_tasks
  for each row when (new.rate_name is not null)
  execute function causeway_rate_window();

-- When a grant of `p_cost` next fits a window of `p_period_ms` holding the grants
-- `p_spent_at` / `p_spent_cost` (all within the period), under `p_limit`: null if it fits
-- now, else when enough of the oldest grants have left the period.
create function causeway_rate_next_at(p_spent_at timestamptz[], p_spent_cost integer[],
  p_period_ms integer, p_limit integer, p_cost integer) returns timestamptz
  language sql immutable as $$
  select case when t.total + p_cost <= p_limit then null else (
    select min(g.at) + p_period_ms * interval '1 millisecond'
    from (
      select s.at, sum(s.cost) over (order by s.at rows unbounded preceding) as gone
      from unnest(p_spent_at, p_spent_cost) as s(at, cost)
    ) as g
    where t.total - g.gone + p_cost <= p_limit) end
  from (select coalesce(sum(c), 0) as total from unnest(p_spent_cost) as c) as t
$$;
