-- A concurrency key of limit 1 on every task (R50), the least a claim must do to count a key's
-- holders and serialise with other claims of the key: one probe of the holders and one write of
-- the key's row per grant. No walk by key heads (head-of-line blocking and fairness are not paid
-- for here).
  update kf_keys k set grant_version = k.grant_version + 1 from c
   where k.ckey = c.ckey and (select count(*) from kf_tasks h where h.ckey = c.ckey and h.state = 'leased') < 1
  returning c.id
