import { sql } from 'kysely';
import { definedWorkflowStep } from '../claim/defined-workflow-step';
import type { Db } from '../database';
import { waitingStateSql } from '../task-states';

/** A waiting task and one stored event its wait matches. */
export interface WaitWithStoredEvent {
  readonly taskId: string;
  readonly workflowId: string;
  readonly workflowName: string;
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
 * Waiting tasks of workflows whose every step this engine defines (`stepKeys`, as the claim)
 * that a stored event of their (name, key), received since their workflow was accepted (R37),
 * matches (R54): an engine that lacked the workflow stored it and left the wait. Tasks in id
 * order after `afterTaskId`, at most `limit` of them, each with up to `eventsReadPerWait` of
 * its events, in the order a wait takes them. Only waits whose key has a stored event at all
 * go further than the probe of `causeway_events_match`; the workflow's primary key is read for
 * those alone.
 */
export async function taskListWaitsWithStoredEvents(
  db: Db,
  stepKeys: readonly string[],
  afterTaskId: string | null,
  limit: number,
): Promise<WaitWithStoredEvent[]> {
  const { rows } = await sql<{
    task_id: string;
    workflow_id: string;
    workflow_name: string;
    step: string;
    id: string;
    name: string;
    key: string;
    payload: unknown;
    sent_by: string;
    reason: string | null;
  }>`
    with keyed as materialized (
      select t.id, t.workflow_id, t.step, t.event_name, t.event_key from causeway_tasks as t
      where t.state = ${waitingStateSql} and t.event_key is not null
        and t.id > coalesce(${afterTaskId}::uuid, '00000000-0000-0000-0000-000000000000')
        and exists (select 1 from causeway_events as e
          where e.name = t.event_name and e.key = t.event_key)
    ),
    matched as materialized (
      select k.id, k.workflow_id, k.step, k.event_name, k.event_key, w.name, w.created_at
      from keyed as k join causeway_workflows as w on w.id = k.workflow_id
      where exists (select 1 from causeway_events as e
          where e.name = k.event_name and e.key = k.event_key and e.received_at >= w.created_at)
        and ${definedWorkflowStep(sql`k`, stepKeys)}
      order by k.id
      limit ${limit}
    )
    select m.id as task_id, m.workflow_id, m.name as workflow_name, m.step, e.id, e.name, e.key,
      e.payload, e.sent_by, e.reason
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
