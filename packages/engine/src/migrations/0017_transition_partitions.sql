-- Retention (docs/retention.md): the transition log is partitioned by RANGE of workflow_id, one
-- partition per UTC day. A workflow's id is a UUIDv7 whose first 48 bits are its creation
-- millisecond (ids.ts), so a workflow's whole log lies in one partition, lookups by workflow_id
-- prune to it, and a day whose workflows are all finished long enough ago is removed by dropping
-- its partition: the append-only trigger keeps refusing row deletes on every partition.

-- The existing rows become the first partition, from MINVALUE up to the day after the latest
-- workflow they hold (or after today). Its identity is handed to the new parent, which goes on
-- from the same last value, so ids stay increasing for every reader ordered by id.
alter table causeway_transitions rename to causeway_transitions_initial;
alter index causeway_transitions_workflow rename to causeway_transitions_initial_workflow;
drop trigger causeway_transitions_no_update_delete on causeway_transitions_initial;
alter table causeway_transitions_initial alter column id drop identity;
-- A partition's unique key must hold the partition key; (id, workflow_id) keeps the id-ordered
-- range scans (metrics, the API's feed) on one index per partition.
alter table causeway_transitions_initial drop constraint causeway_transitions_pkey;
-- The rows were checked against the narrower reason lists of 0011 and 0016 (NOT VALID there); a
-- partition's CHECKs must be valid to match the parent's. The key below reads every row anyway.
alter table causeway_transitions_initial validate constraint causeway_transitions_reason_check;
alter table causeway_transitions_initial
  add constraint causeway_transitions_initial_pkey primary key (id, workflow_id);

-- The same columns and CHECKs (the reason codes, kept equal to machine-table.ts by
-- schema-catalog.test.ts), now valid on every partition.
create table causeway_transitions (like causeway_transitions_initial including constraints)
  partition by range (workflow_id);
alter table causeway_transitions alter column id add generated always as identity;
alter table causeway_transitions add primary key (id, workflow_id);
create index causeway_transitions_workflow on causeway_transitions (workflow_id, id);

-- The day boundary as the smallest UUIDv7 of its first millisecond: partition bounds.
create function causeway_uuid_floor(at timestamptz) returns uuid
language sql immutable
as $$
  select (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-0000-0000-000000000000')::uuid
    from (select lpad(to_hex((extract(epoch from at) * 1000)::bigint), 12, '0') as h) as x
$$;

-- The creation time a UUIDv7 carries (its first 48 bits, milliseconds since the epoch).
create function causeway_uuid_time(id uuid) returns timestamptz
language sql immutable
as $$
  select to_timestamp(('x' || lpad(replace(left(id::text, 13), '-', ''), 16, '0'))::bit(64)::bigint / 1000.0)
$$;

do $$
declare
  latest timestamptz;
  upper_day date;
  last_id bigint;
begin
  select causeway_uuid_time(workflow_id) into latest
    from causeway_transitions_initial order by workflow_id desc limit 1;
  upper_day := (greatest(coalesce(latest, now()), now()) at time zone 'UTC')::date + 1;
  -- The CHECK proves the rows lie in the bound, so ATTACH does not scan them again.
  execute format(
    'alter table causeway_transitions_initial add constraint causeway_transitions_initial_bound
       check (workflow_id < %L::uuid)', causeway_uuid_floor(upper_day::timestamp at time zone 'UTC'));
  execute format(
    'alter table causeway_transitions attach partition causeway_transitions_initial
       for values from (minvalue) to (%L)', causeway_uuid_floor(upper_day::timestamp at time zone 'UTC'));
  alter table causeway_transitions_initial drop constraint causeway_transitions_initial_bound;
  select max(id) into last_id from causeway_transitions_initial;
  execute format('alter table causeway_transitions alter column id restart with %s', coalesce(last_id, 0) + 1);
end
$$;

-- A row whose workflow id falls in no day partition (an id made by a process whose clock is far
-- off, beyond the days made ahead or before a dropped day) still inserts: it lands here. Rows
-- here are never dropped by retention; `purgeFinished` reports how many there are.
create table causeway_transitions_default partition of causeway_transitions default;

-- Rows are never updated or deleted (0001): the row trigger on the parent is cloned onto every
-- partition; TRUNCATE triggers are per table, so each partition gets its own.
create trigger causeway_transitions_no_update_delete
  before update or delete on causeway_transitions
  for each row execute function causeway_transitions_append_only();
create trigger causeway_transitions_no_truncate
  before truncate on causeway_transitions
  for each statement execute function causeway_transitions_append_only();
create trigger causeway_transitions_no_truncate
  before truncate on causeway_transitions_default
  for each statement execute function causeway_transitions_append_only();

-- The log's partitions with their bounds (null: MINVALUE), read from the catalog.
create view causeway_transition_partitions as
select c.relname::text as name,
       c.relpartbound is not null and b.bound is null as is_default,
       nullif(trim(both '''' from b.bound[1]), 'MINVALUE')::uuid as lower_id,
       nullif(trim(both '''' from b.bound[2]), 'MAXVALUE')::uuid as upper_id
  from pg_inherits as i
  join pg_class as c on c.oid = i.inhrelid
  left join lateral regexp_match(pg_get_expr(c.relpartbound, c.oid),
    'FROM \((.+)\) TO \((.+)\)') as b(bound) on true
 where i.inhparent = 'causeway_transitions'::regclass;

-- Makes the day partitions from the last one's end (or today) up to `through`: a new table attached under
-- SHARE UPDATE EXCLUSIVE, so log inserts go on meanwhile (CREATE … PARTITION OF would take
-- ACCESS EXCLUSIVE on the log). A day whose range already has rows in the default partition is
-- skipped (ATTACH would refuse): its rows keep landing there. One caller at a time; another
-- returns 0 at once. Returns the partitions made.
create function causeway_transition_partitions_ensure(through timestamptz) returns integer
language plpgsql
as $$
declare
  next_day date;
  day_lower uuid;
  day_upper uuid;
  name text;
  made integer := 0;
begin
  if not pg_try_advisory_xact_lock(hashtext('causeway_transition_partitions_ensure')) then
    return 0;
  end if;
  -- ATTACH scans the default partition under ACCESS EXCLUSIVE; readers of the whole log queue
  -- behind it while it waits for a long reader, so it gives up soon and is tried again later.
  perform set_config('lock_timeout', '1000ms', true);
  select p.upper_id into day_upper from causeway_transition_partitions as p
   where p.upper_id is not null order by p.upper_id desc limit 1;
  -- From the last partition's end, or from today when that end is in the past: a day with no
  -- partition and no engine running is not made later (its rows, if any, went to the default).
  next_day := greatest(
    (causeway_uuid_time(day_upper) at time zone 'UTC')::date,
    (causeway_now() at time zone 'UTC')::date);
  while next_day::timestamp at time zone 'UTC' < through loop
    day_lower := causeway_uuid_floor(next_day::timestamp at time zone 'UTC');
    day_upper := causeway_uuid_floor((next_day + 1)::timestamp at time zone 'UTC');
    name := 'causeway_transitions_' || to_char(next_day, 'YYYYMMDD');
    if not exists (select 1 from causeway_transitions_default
                    where workflow_id >= day_lower and workflow_id < day_upper) then
      execute format('create table %I (like causeway_transitions including constraints)', name);
      execute format('alter table causeway_transitions attach partition %I for values from (%L) to (%L)',
        name, day_lower, day_upper);
      execute format('create trigger causeway_transitions_no_truncate before truncate on %I
        for each statement execute function causeway_transitions_append_only()', name);
      made := made + 1;
    end if;
    next_day := next_day + 1;
  end loop;
  return made;
end
$$;

select causeway_transition_partitions_ensure(causeway_now() + interval '7 days');

-- What each retention run removed (docs/retention.md): who, when, why, and what held the rest.
create table causeway_retention_runs (
  id bigint generated always as identity primary key,
  operator text not null,
  reason text not null,
  older_than_ms bigint not null check (older_than_ms >= 0),
  -- Workflows finished before this (database time) were eligible.
  cutoff_at timestamptz not null,
  started_at timestamptz not null,
  finished_at timestamptz not null,
  workflows_removed bigint not null,
  tasks_removed bigint not null,
  log_rows_removed bigint not null,
  -- [{"name": …, "logRows": …}] dropped, [{"name": …, "liveWorkflows": …, …}] kept and why.
  partitions_dropped jsonb not null,
  partitions_held jsonb not null
);
