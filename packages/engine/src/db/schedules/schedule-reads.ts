import type { WorkflowState } from '@causeway/workflow';
import { sql } from 'kysely';
import type { Db } from '../database';
import {
  type ScheduleEventKind,
  type ScheduleEventRecord,
  type ScheduleListRecord,
  type ScheduleRow,
  scheduleFromRow,
} from './schedule-rows';

/** Every stored schedule (or the one named) by name, with its last workflow's state. */
export async function scheduleList(
  db: Db,
  name: string | null = null,
): Promise<ScheduleListRecord[]> {
  const { rows } = await sql<ScheduleRow & { last_workflow_state: string | null }>`
    select s.*, w.state as last_workflow_state
    from causeway_schedules as s
    left join causeway_workflows as w on w.id = s.last_workflow_id
    where ${name}::text is null or s.name = ${name}::text
    order by s.name`.execute(db);
  return rows.map((row) => ({
    ...scheduleFromRow(row),
    lastWorkflowState: row.last_workflow_state as WorkflowState | null,
  }));
}

/** The operator history of the schedules `names`, oldest first. */
export async function scheduleEventList(
  db: Db,
  names: readonly string[],
): Promise<ScheduleEventRecord[]> {
  if (names.length === 0) return [];
  const { rows } = await sql<{
    id: string;
    schedule_name: string;
    kind: string;
    operator: string;
    reason: string;
    workflow_id: string | null;
    at: Date;
  }>`
    select id::text as id, schedule_name, kind, operator, reason, workflow_id, at
    from causeway_schedule_events where schedule_name = any(${[...names]}::text[])
    order by id`.execute(db);
  return rows.map((row) => ({
    id: row.id,
    schedule: row.schedule_name,
    kind: row.kind as ScheduleEventKind,
    operator: row.operator,
    reason: row.reason,
    workflowId: row.workflow_id,
    at: row.at,
  }));
}
