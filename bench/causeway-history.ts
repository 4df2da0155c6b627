/**
 * Finished one-step workflows of the past, written directly in SQL (the w2h workload): the
 * same rows the engine leaves behind for a succeeded `bench-noop` — the workflow, its task
 * and the six transition rows (submitted ×2, lease_acquired ×2, completed ×2). $1 = how many,
 * $2 = the workflow name. Written straight into the tables so a 200,000-row history takes
 * seconds instead of a minute of real runs; it is untimed either way.
 */
export const historySql = `
with w as (
  insert into causeway_workflows (id, name, state, input, created_at, updated_at)
  select gen_random_uuid(), $2, 'succeeded', jsonb_build_object('i', -g),
         now() - interval '1 day', now() - interval '1 day'
    from generate_series(1, $1::int) g
  returning id, created_at
), t as (
  insert into causeway_tasks (id, workflow_id, step, queue, state, attempt, max_attempts,
                              lease_epoch, created_at, updated_at)
  select gen_random_uuid(), id, 'only', 'default', 'succeeded', 1, 5, 1, created_at, created_at
    from w
  returning id, workflow_id, created_at
)
insert into causeway_transitions (workflow_id, task_id, step, from_state, to_state, reason,
                                  actor, attempt, at, detail)
select t.workflow_id, r.task_id, r.step, r.from_state, r.to_state, r.reason, r.actor,
       r.attempt, t.created_at, r.detail
  from t cross join lateral (values
    (1, null::uuid, null, null, 'queued', 'submitted', 'client', 0, null::jsonb),
    (2, t.id, 'only', null, 'queued', 'submitted', 'client', 0, null),
    (3, t.id, 'only', 'queued', 'leased', 'lease_acquired', 'worker:history', 1, null),
    (4, null, null, 'queued', 'running', 'lease_acquired', 'worker:history', 0, '{"step":"only"}'),
    (5, t.id, 'only', 'leased', 'succeeded', 'completed', 'worker:history', 1, null),
    (6, null, null, 'running', 'succeeded', 'completed', 'worker:history', 0, '{"step":"only"}')
  ) as r(n, task_id, step, from_state, to_state, reason, actor, attempt, detail)
 order by t.workflow_id, r.n`;
