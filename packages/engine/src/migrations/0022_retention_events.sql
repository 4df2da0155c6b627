-- R59: retention removes the events and deliveries no kept workflow needs. The tables stay
-- append-only for everything else: their trigger lets a DELETE through only in a transaction
-- that declared itself a retention run (db/retention/retention-delete-allow.ts sets
-- causeway.retention_run locally, and only retention's statements follow it). It guards
-- against a mistaken statement, as the trigger did; UPDATE and TRUNCATE stay refused.
create or replace function causeway_events_append_only() returns trigger
language plpgsql
as $$
begin
  if tg_op = 'DELETE' and current_setting('causeway.retention_run', true) = 'on' then
    return old;
  end if;
  raise exception '% is append-only: % is not allowed', tg_table_name, tg_op
    using errcode = 'insufficient_privilege';
end
$$;

-- What each run removed of them. Earlier runs removed none.
alter table causeway_retention_runs
  add column events_removed bigint not null default 0,
  add column deliveries_removed bigint not null default 0;

-- Retention's question: the events received before a bound, oldest first. A send inserts one
-- more entry, at the index's right-hand end (received_at is the send's database time).
create index causeway_events_received on causeway_events (received_at);
