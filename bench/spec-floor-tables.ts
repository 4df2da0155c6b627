// S's tables (bench/spec-floor.ts): their schema, and rows that look like a finished history.

/** The one queue S's tasks go to. */
export const queue = 'default';

// Causeway's schema (packages/engine/src/migrations, after 0007) cut to the columns above:
// no foreign keys, the same indexes, fillfactor 70 on workflows for HOT state updates.
export const schema = `
create table sq_workflows (
  id         uuid primary key,
  name       text not null,
  state      text not null,
  input      jsonb not null,
  created_at timestamptz not null,
  updated_at timestamptz not null
) with (fillfactor = 70);
create index sq_workflows_created on sq_workflows (created_at, id);

create table sq_tasks (
  id               uuid primary key,
  workflow_id      uuid not null,
  step             text not null,
  queue            text not null,
  state            text not null,
  attempt          integer not null default 0,
  run_at           timestamptz,
  lease_holder     text,
  lease_epoch      bigint not null default 0,
  lease_expires_at timestamptz,
  output           jsonb,
  created_at       timestamptz not null,
  updated_at       timestamptz not null,
  unique (workflow_id, step)
);
create index sq_tasks_ready on sq_tasks (queue, run_at) where state = 'queued';
create index sq_tasks_lease_expiry on sq_tasks (lease_expires_at)
  where state in ('leased', 'cancel_requested');

create table sq_transitions (
  id         bigint generated always as identity primary key,
  workflow_id uuid not null,
  task_id    uuid,
  step       text,
  from_state text,
  to_state   text not null,
  reason     text not null,
  actor      text not null,
  attempt    integer not null,
  at         timestamptz not null,
  detail     jsonb
);
create index sq_transitions_workflow on sq_transitions (workflow_id, id)`;

/**
 * Finished one-step workflows of the past (w2h): the rows S leaves behind for one — the
 * workflow, its task, and the six log rows. $1 = how many, $2 = the workflow name.
 */
export const historySql = `
with w as (
  insert into sq_workflows (id, name, state, input, created_at, updated_at)
  select gen_random_uuid(), $2, 'succeeded', jsonb_build_object('i', -g),
         now() - interval '1 day', now() - interval '1 day'
    from generate_series(1, $1::int) g
  returning id, created_at
), t as (
  insert into sq_tasks (id, workflow_id, step, queue, state, attempt, lease_epoch, output,
                        created_at, updated_at)
  select gen_random_uuid(), id, 'a', '${queue}', 'succeeded', 1, 1, 'null'::jsonb, created_at,
         created_at
    from w
  returning id, workflow_id, created_at
)
insert into sq_transitions (workflow_id, task_id, step, from_state, to_state, reason, actor,
                            attempt, at)
select t.workflow_id, r.task_id, r.step, r.from_state, r.to_state, r.reason, r.actor,
       r.attempt, t.created_at
  from t cross join lateral (values
    (1, null::uuid, null, null, 'queued', 'submitted', 'client', 0),
    (2, t.id, 'a', null, 'queued', 'submitted', 'client', 0),
    (3, t.id, 'a', 'queued', 'leased', 'lease_acquired', 'worker:history', 1),
    (4, null, null, 'queued', 'running', 'lease_acquired', 'worker:history', 0),
    (5, t.id, 'a', 'leased', 'succeeded', 'completed', 'worker:history', 1),
    (6, null, null, 'running', 'succeeded', 'completed', 'worker:history', 0)
  ) as r(n, task_id, step, from_state, to_state, reason, actor, attempt)
 order by t.workflow_id, r.n`;
