import { sql } from 'kysely';
import type { Db } from '../database';
import { waitingStateSql } from '../task-states';

/** The database's snapshot now, as text: where a sweeper's reading of new events starts. */
export async function eventSnapshotNow(db: Db): Promise<string> {
  const { rows } = await sql<{ snapshot: string }>`
    select pg_current_snapshot()::text as snapshot`.execute(db);
  return (rows[0] as { snapshot: string }).snapshot;
}

/**
 * The waiting tasks of every (name, key) stored by a transaction that `since` (a snapshot an
 * earlier call answered) could not see: one at or after its xmax, or in flight then. Answers
 * this statement's own snapshot for the next call, so each committed event is read by one call
 * of a chain, whichever order transactions commit in (0023). Probes the `xact` index, then the
 * waits' partial index per event; the caller keeps to the tasks it defines.
 */
export async function taskListWaitsOfNewEvents(
  db: Db,
  since: string,
): Promise<{ snapshot: string; taskIds: string[] }> {
  const { xmax, inFlight } = snapshotParts(since);
  // Literals, not parameters of functions: the planner estimates the new events from them
  // and probes the indexes, where a range it cannot see is a third of the table.
  const { rows } = await sql<{ snapshot: string; id: string | null }>`
    with fresh as materialized (
      select name, key from causeway_events where xact >= ${sql.lit(xmax)}::xid8
      union all
      select name, key from causeway_events
      where xact = any(${sql.lit(`{${inFlight.join(',')}}`)}::xid8[])
    ),
    waits as materialized (
      select distinct t.id from fresh as f
      cross join lateral (select c.id from causeway_tasks as c
        where c.state = ${waitingStateSql} and c.event_name = f.name and c.event_key = f.key) as t
    )
    select pg_current_snapshot()::text as snapshot, w.id
    from (select 1) as one left join waits as w on true
    order by w.id`.execute(db);
  return {
    snapshot: (rows[0] as { snapshot: string }).snapshot,
    taskIds: rows.flatMap((row) => (row.id === null ? [] : [row.id])),
  };
}

/** A snapshot's text (`xmin:xmax:xip,…`, all digits) as its parts, checked. */
function snapshotParts(text: string): { xmax: string; inFlight: string[] } {
  const match = /^(\d+):(\d+):([\d,]*)$/.exec(text);
  if (match === null) throw new Error(`not a snapshot: ${JSON.stringify(text)}`);
  const inFlight = (match[3] as string).split(',').filter((xid) => xid !== '');
  return { xmax: match[2] as string, inFlight };
}
