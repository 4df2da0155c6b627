import { terminalWorkflowStates } from '@causeway/workflow/internal';
import { sql } from 'kysely';
import type { Db } from '../database';
import { withLiveTask } from '../reads/workflow-page';

/** How many workflows of one (name, version) are in flight (R54). */
export interface VersionInFlight {
  readonly name: string;
  /** Null for workflows stored before versions were recorded. */
  readonly version: string | null;
  readonly inFlight: number;
}

/**
 * Workflows not yet terminal, counted by (name, version). A workflow in flight has a live
 * task, so they are found through the live tasks' partial indexes (`withLiveTask`), each
 * workflow then by its primary key: the cost follows the live work, however many finished
 * workflows the tables hold.
 */
export async function versionsInFlightList(db: Db): Promise<VersionInFlight[]> {
  const { rows } = await sql<{ name: string; version: string | null; in_flight: number }>`
    select name, version, count(*)::int as in_flight
    from causeway_workflows
    where ${withLiveTask}
      and state not in (${sql.join(terminalWorkflowStates.map((state) => sql.lit(state)))})
    group by name, version`.execute(db);
  return rows.map((row) => ({ name: row.name, version: row.version, inFlight: row.in_flight }));
}
