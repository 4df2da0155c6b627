-- As the log's and the tasks' (0007): a delivery is written only in the statement or
-- transaction that stores its event, or for an event a wait found stored, and events are never
-- deleted, so the foreign key to causeway_events checked what the writes already hold. Its check
-- cost more than the rest of a send: PostgreSQL plans it once per connection, and a plan made
-- while the table was small scans every event on each delivery for as long as the connection
-- lives. The tests check that every delivery names a stored event.
alter table causeway_event_deliveries drop constraint causeway_event_deliveries_event_id_fkey;
