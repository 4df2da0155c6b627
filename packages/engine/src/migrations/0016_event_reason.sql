-- R38: an event may carry its sender's reason (an operator's words, e.g. why they approve),
-- kept on the event and on the edges it completes. The table is append-only, so the column is
-- written at insert and never after. Null: the sender gave none. The CHECK mirrors the limit
-- sendEvent enforces; NOT VALID because every existing row has no reason, so the table is not
-- scanned to prove it.
alter table causeway_events
  add column reason text,
  add constraint causeway_events_reason_check check (
    reason is null or char_length(reason) between 1 and 1000) not valid;
