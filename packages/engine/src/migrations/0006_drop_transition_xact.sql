-- 0002's rule (deliver rows whose transaction is older than every one in flight) can skip a
-- row: a transaction with a smaller xid may take a larger transition id. The API's log
-- reader orders by id with its own finality probe instead (packages/engine/src/read-model.ts),
-- so the column is unused.
alter table causeway_transitions drop column xact_id;
