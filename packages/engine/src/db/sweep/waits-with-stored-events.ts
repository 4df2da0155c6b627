import { sql } from 'kysely';
import { arrayLiteral } from '../array-literal';
import { definedWorkflowStep } from '../claim/defined-workflow-step';
import type { Db } from '../database';
import { waitingStateSql } from '../task-states';

/** A waiting task and one stored event its wait matches. */
export interface WaitWithStoredEvent {
  readonly taskId: string;
  readonly workflowId: string;
  readonly workflowName: string;
  /** The version its workflow records (R54); null if stored before versions. */
  readonly workflowVersion: string | null;
  readonly step: string;
  readonly event: {
    readonly id: string;
    readonly name: string;
    readonly key: string;
    readonly payload: unknown;
    readonly sentBy: string;
    readonly reason: string | null;
  };
}

/**
 * How many stored events of one wait's (name, key) a pass reads, first received first: a wait
 * takes the first whose payload its step accepts (an engine that did not define the step could
 * not check the payload when it stored the event).
 */
export const eventsReadPerWait = 16;

/**
 * Which waiting tasks to look at: every one, a page at a time in id order (a sweeper's first
 * pass), or these (the waits of events stored since its last pass).
 */
export type WaitScope =
  | { readonly afterTaskId: string | null; readonly limit: number }
  | { readonly taskIds: readonly string[] };

/**
 * Waiting tasks of workflows whose every step this engine defines (`stepKeys`, as the claim)
 * that a stored event of their (name, key), received since their workflow was accepted (R37),
 * matches (R54): an engine that lacked the workflow stored it and left the wait. Tasks in id
 * order, each with up to `eventsReadPerWait` of its events, in the order a wait takes them.
 * Only waits whose key has a stored event at all go further than the probe of
 * `causeway_events_match`; the workflow's primary key is read for those alone.
 */
export async function taskListWaitsWithStoredEvents(
  db: Db,
  stepKeys: readonly string[],
  scope: WaitScope,
): Promise<WaitWithStoredEvent[]> {
  const inScope =
    'taskIds' in scope
      ? sql`t.id = any(${arrayLiteral(scope.taskIds)}::uuid[])`
      : sql`t.id > coalesce(${scope.afterTaskId}::uuid, '00000000-0000-0000-0000-000000000000')`;
  const limit = 'taskIds' in scope ? scope.taskIds.length : scope.limit;
  const { rows } = await sql<{
    task_id: string;
    workflow_id: string;
    workflow_name: string;
    workflow_version: string | null;
    step: string;
    id: string;
    name: string;
    key: string;
    payload: unknown;
    sent_by: string;
    reason: string | null;
  }>`
    -- Laterals with a limit, not joins or EXISTS: a join the planner may answer with a hash of
    -- every event or workflow; a lateral with a limit is an index probe per row (the probes of
    -- causeway_events_match and of the primary key), whatever the statistics say.
    with keyed as materialized (
      select t.id, t.workflow_id, t.step, t.event_name, t.event_key from causeway_tasks as t
      cross join lateral (select 1 from causeway_events as e
        where e.name = t.event_name and e.key = t.event_key limit 1) as stored
      where t.state = ${waitingStateSql} and t.event_key is not null
        and ${inScope}
    ),
    matched as materialized (
      select k.id, k.workflow_id, k.step, k.event_name, k.event_key, w.name, w.version,
        w.created_at
      from keyed as k
      cross join lateral (select name, version, created_at from causeway_workflows
        where id = k.workflow_id limit 1) as w
      cross join lateral (select 1 from causeway_events as e
        where e.name = k.event_name and e.key = k.event_key and e.received_at >= w.created_at
        limit 1) as since
      where ${definedWorkflowStep(sql`k`, stepKeys)}
      order by k.id
      limit ${limit}
    )
    select m.id as task_id, m.workflow_id, m.name as workflow_name,
      m.version as workflow_version, m.step, e.id, e.name, e.key, e.payload, e.sent_by, e.reason
    from matched as m
    cross join lateral (
      select id, name, key, payload, sent_by, reason, received_at from causeway_events
      where name = m.event_name and key = m.event_key and received_at >= m.created_at
      order by received_at, id
      limit ${eventsReadPerWait}
    ) as e
    order by m.id, e.received_at, e.id`.execute(db);
  return rows.map((row) => ({
    taskId: row.task_id,
    workflowId: row.workflow_id,
    workflowName: row.workflow_name,
    workflowVersion: row.workflow_version,
    step: row.step,
    event: {
      id: row.id,
      name: row.name,
      key: row.key,
      payload: row.payload,
      sentBy: row.sent_by,
      reason: row.reason,
    },
  }));
}
