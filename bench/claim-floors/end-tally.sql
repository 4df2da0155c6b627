-- Every task a child of one parent step (R45): each settle adds its children to the step's one
-- tally row.
), tl as (
  update kf_tally set done = done + (select count(*) from d) where id = 1 and exists (select 1 from d) returning done, total
) select (select done = total from tl);
