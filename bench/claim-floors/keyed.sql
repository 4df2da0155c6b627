-- plain.sql with a concurrency key of limit 1 on every task (R50), the least a claim must do to
-- count a key's holders and serialise with other claims of the key: one probe of the holders and
-- one write of the key's row per grant. No walk by key heads (head-of-line blocking and fairness
-- are not paid for here).
with c as (
  select id, ckey from kf_tasks where state = 'queued' and queue = 'q' and run_at <= now()
   order by run_at limit 10 for update skip locked
), g as (
  update kf_keys k set grant_version = k.grant_version + 1 from c
   where k.ckey = c.ckey and (select count(*) from kf_tasks h where h.ckey = c.ckey and h.state = 'leased') < 1
  returning c.id
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
) select 1;
