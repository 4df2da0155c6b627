-- The database clock read when it is called, not when the statement began: a claim's time.
-- A statement's snapshot is taken after its start, so a claim may see an edge that committed
-- since it began, stamped with that edge's own later statement start: a freed slot (R50)
-- would then be logged after the claim that took it, as if the key had held one more. Read
-- once the claim runs, after its snapshot, its time is later than every edge it saw.
create function causeway_clock_now() returns timestamptz
language plpgsql volatile
as $$
begin
  return clock_timestamp() + (select offset_ms from causeway_clock) * interval '1 millisecond';
end
$$;
