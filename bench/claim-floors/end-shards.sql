-- The tally in 64 rows, each connection writing its own.
), tl as (
  update kf_shards set done = done + (select count(*) from d) where id = pg_backend_pid() % 64 and exists (select 1 from d) returning done
) select (select done from tl);
