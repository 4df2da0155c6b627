-- Live transition streams need commit order, not id order: identity values are handed out
-- before commit, so a later id can commit first. Each row records its transaction id; a
-- reader delivers only rows whose transaction is older than every transaction still in
-- flight (pg_snapshot_xmin), so a resumed stream never skips a row that commits late.
alter table causeway_transitions
  add column xact_id xid8 not null default pg_current_xact_id();
