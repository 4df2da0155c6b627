-- One (name, key) pair, as every sendEvent is, takes its lock and reads its waits with one
-- plain query each: the sort of the pairs and the loop cost a single send more than its lock
-- and its read together. Batches keep 0018's order (the text the transaction path sorts by)
-- and one index probe per pair.
create or replace function causeway_event_waits_locked(names text[], keys text[])
returns table (task_id uuid, workflow_id uuid, pair_index integer)
language plpgsql volatile
as $$
begin
  if cardinality(names) = 1 then
    perform pg_advisory_xact_lock(hashtext('causeway_event'),
      hashtext(names[1] || E'\n' || keys[1]));
    return query
      select t.id, t.workflow_id, 1 from causeway_tasks as t
      where t.state = 'waiting' and t.event_name = names[1] and t.event_key = keys[1];
    return;
  end if;
  perform pg_advisory_xact_lock(hashtext('causeway_event'), hashtext(k))
  from (select distinct v.name || E'\n' || v.key as k
        from unnest(names, keys) as v(name, key) order by 1) as ordered;
  for i in 1 .. coalesce(array_length(names, 1), 0) loop
    return query
      select t.id, t.workflow_id, i from causeway_tasks as t
      where t.state = 'waiting' and t.event_name = names[i] and t.event_key = keys[i];
  end loop;
end
$$;
