-- causeway_now() as PL/pgSQL: a SQL function with a sub-select is not inlined, so PostgreSQL
-- plans its body on every statement that calls it (about 60 µs); PL/pgSQL keeps the plan for
-- the session (about 25 µs). Same meaning: database time plus the test-only offset (R11).
create or replace function causeway_now() returns timestamptz
language plpgsql stable
as $$
begin
  return now() + (select offset_ms from causeway_clock) * interval '1 millisecond';
end
$$;

-- The same clock read at the start of the current statement instead of the transaction. A
-- claim may run late in a transaction (the one that writes a worker's results claims for the
-- slots they free); with now() it would judge a task submitted since the transaction began as
-- not yet due, and leave it queued (R4 compares run_at with the claim's own time).
create function causeway_statement_now() returns timestamptz
language plpgsql stable
as $$
begin
  return statement_timestamp() + (select offset_ms from causeway_clock) * interval '1 millisecond';
end
$$;
