-- The one-statement claim and settle count the rows they decided to write and the rows they
-- wrote; the two differ only if a concurrent update changed a row in a way the statement
-- could not follow. Checking that in the statement itself, rather than in the client after
-- it, makes the statement fail and undo everything it wrote even when it runs on its own
-- (autocommit), without an explicit transaction for the client to roll back. The code is
-- serialization_failure, so callers retry it like one.
create function causeway_written_as_decided(decided bigint, written bigint) returns boolean
language plpgsql volatile
as $$
begin
  if decided <> written then
    raise exception 'the statement wrote % of the % rows it decided', written, decided
      using errcode = 'serialization_failure';
  end if;
  return true;
end
$$;
