-- A fresh backlog of :n one-step workflows, each task keyed over 1,000 keys when :keyed.
truncate kf_tasks, kf_workflows, kf_transitions, kf_keys;
insert into kf_workflows select md5(i::text)::uuid, 'w', 'queued', '{}'::jsonb, now() from generate_series(1, :n) i;
insert into kf_tasks (id, workflow_id, step, queue, state, run_at, ckey, updated_at)
  select md5('t'||i)::uuid, md5(i::text)::uuid, 'a', 'q', 'queued', now() - interval '1 hour' + i * interval '1 microsecond',
    case when :keyed then 'k' || (i % 1000) end, now() from generate_series(1, :n) i;
insert into kf_keys select 'k' || i from generate_series(0, 999) i;
truncate kf_tally, kf_shards;
insert into kf_tally values (1, 0, :n);
insert into kf_shards select i, 0 from generate_series(0, 63) i;
analyze;
checkpoint;
