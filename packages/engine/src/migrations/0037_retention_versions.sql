-- R54 with R59: a retention run also removes the versions of the versions listing that no
-- worker serves and no kept workflow records (docs/retention.md). What each run removed of
-- them; earlier runs removed none.
alter table causeway_retention_runs
  add column versions_removed bigint not null default 0;
