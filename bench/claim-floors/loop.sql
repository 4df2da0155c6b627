-- One loop of a worker at the contract floor (S of W2): claim up to 10 ready tasks with their
-- workflows and log rows in one statement, then settle them in another. run.sh fills in what a
-- case changes: which candidates a claim may grant (-- GRANT, grant-*.sql) and what a settle
-- writes besides its tasks, workflows and log rows (-- END, end-*.sql).
with c as (
  select id, ckey from kf_tasks where state = 'queued' and queue = 'q' and run_at <= now()
   order by run_at limit 10 for update skip locked
), g as (
-- GRANT
), t as (
  update kf_tasks t set state = 'leased', attempt = t.attempt + 1, lease_holder = 'h',
     lease_epoch = t.lease_epoch + 1, lease_expires_at = now() + interval '30 seconds', updated_at = now()
    from g where t.id = g.id returning t.id, t.workflow_id, t.step, t.attempt, t.lease_epoch
), w as (
  update kf_workflows w set state = 'running', updated_at = now() from t where w.id = t.workflow_id and w.state = 'queued'
  returning w.id, w.input
), l as (
  insert into kf_transitions (workflow_id, task_id, step, from_state, to_state, reason, actor, attempt, at)
  select workflow_id, id, step, 'queued', 'leased', 'lease_acquired', 'w', attempt, now() from t
  union all select id, null, null, 'queued', 'running', 'lease_acquired', 'w', 0, now() from w
)
select coalesce((select array_agg(id) from t), '{}')::text as tids, coalesce((select array_agg(lease_epoch) from t), '{}')::text as eps \gset
with d as (
  update kf_tasks t set state = 'succeeded', output = 'null', lease_holder = null, lease_expires_at = null, updated_at = now()
    from unnest(:tids::uuid[], :eps::bigint[]) r(id, epoch)
   where t.id = r.id and t.state = 'leased' and t.lease_holder = 'h' and t.lease_epoch = r.epoch and t.lease_expires_at > now()
  returning t.id, t.workflow_id, t.step, t.attempt
), w as (
  update kf_workflows w set state = 'succeeded', updated_at = now() from d where w.id = d.workflow_id and w.state = 'running' returning w.id
), l as (
  insert into kf_transitions (workflow_id, task_id, step, from_state, to_state, reason, actor, attempt, at)
  select workflow_id, id, step, 'leased', 'succeeded', 'completed', 'w', attempt, now() from d
  union all select id, null, null, 'running', 'succeeded', 'completed', 'w', 0, now() from w
-- END
