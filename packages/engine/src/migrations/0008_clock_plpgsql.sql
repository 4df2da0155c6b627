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
