-- Tables of the hand-written claim floors (bench/claim-floors/run.sh).
drop table if exists kf_tasks, kf_workflows, kf_transitions, kf_keys, kf_tally, kf_shards;
create table kf_workflows (id uuid primary key, name text, state text, input jsonb, updated_at timestamptz);
create table kf_tasks (id uuid primary key, workflow_id uuid, step text, queue text, state text,
  attempt int default 0, run_at timestamptz, lease_holder text, lease_epoch bigint default 0,
  lease_expires_at timestamptz, output jsonb, ckey text, updated_at timestamptz);
create index kf_ready on kf_tasks (queue, run_at) where state = 'queued';
create index kf_holders on kf_tasks (ckey) where ckey is not null and state = 'leased';
create table kf_transitions (id bigint generated always as identity primary key, workflow_id uuid, task_id uuid,
  step text, from_state text, to_state text, reason text, actor text, attempt int, at timestamptz);
create index on kf_transitions (workflow_id, id);
create index on kf_transitions (task_id, id);
create table kf_keys (ckey text primary key, grant_version bigint not null default 0);
create table kf_tally (id int primary key, done bigint not null, total bigint not null);
create table kf_shards (id int primary key, done bigint not null);
