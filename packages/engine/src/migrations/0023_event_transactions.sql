-- R54: an engine that lacks a waiting workflow stores the event and leaves the wait, and the
-- sweeper of an engine that defines it finds the event. Each event row carries the id of the
-- transaction that stored it, so a sweeper reads only the events its previous pass could not
-- see: those of transactions at or after that pass's snapshot's xmax, or in flight then (its
-- xip list), whatever order they committed in. Both are index probes, so a pass costs the new
-- events, not the parked waits or the stored events. Rows stored before this column have no
-- transaction id: a sweeper's first pass looks at every wait instead (they are older than it).
-- The default is set after the column is added, so existing rows are not rewritten; the send
-- statements list their columns and so fill it from the default.
alter table causeway_events add column xact xid8;
alter table causeway_events alter column xact set default pg_current_xact_id();
create index causeway_events_xact on causeway_events (xact);
