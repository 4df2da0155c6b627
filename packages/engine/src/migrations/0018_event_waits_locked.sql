-- R38 in one statement: a send takes the (name, key) locks that a wait also takes to look for
-- earlier events, then reads the waits under them. That read needs a snapshot taken after the
-- locks, so that every wait committed before them is seen; a statement's own snapshot is taken
-- before anything in it runs, but each query of a volatile PL/pgSQL function takes a new one.
-- The locks are taken in the order of the same text the transaction path sorts by
-- (name, newline, key), so the two paths never wait for each other in a cycle. 'waiting' is
-- the predicate of the partial index causeway_tasks_waiting (0013): a literal here lets the
-- function's cached plan use it. Each wait comes with the index of its pair in the arrays (1-based).
create function causeway_event_waits_locked(names text[], keys text[])
returns table (task_id uuid, workflow_id uuid, pair_index integer)
language plpgsql volatile
as $$
begin
  perform pg_advisory_xact_lock(hashtext('causeway_event'), hashtext(k))
  from (select distinct v.name || E'\n' || v.key as k
        from unnest(names, keys) as v(name, key) order by 1) as ordered;
  -- One probe of the index per pair: a join of the pairs with the waits is planned from the
  -- tables' statistics, and while those are behind (a table just filled) the planner may
  -- hash-join every wait instead.
  for i in 1 .. coalesce(array_length(names, 1), 0) loop
    return query
      select t.id, t.workflow_id, i from causeway_tasks as t
      where t.state = 'waiting' and t.event_name = names[i] and t.event_key = keys[i];
  end loop;
end
$$;
