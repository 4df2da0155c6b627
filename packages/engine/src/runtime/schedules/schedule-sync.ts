import {
  checkAdmission,
  DefinitionError,
  nextTick,
  type ScheduleDefinition,
  type WorkflowRegistry,
} from '@causeway/workflow/internal';
import { databaseNow } from '../../db/clock';
import type { Db } from '../../db/database';
import { scheduleUpsert } from '../../db/schedules/schedule-upsert';

/**
 * The schedules an engine is given must submit workflows it defines, with inputs their
 * schemas accept: checked when the engine is created, like a definition.
 */
export function checkSchedules(
  schedules: ReadonlyMap<string, ScheduleDefinition>,
  definitions: WorkflowRegistry,
): void {
  const problems: string[] = [];
  for (const schedule of schedules.values()) {
    const definition = definitions.get(schedule.workflow);
    if (definition === undefined) {
      problems.push(
        `schedule "${schedule.name}" submits "${schedule.workflow}", which this engine does not define`,
      );
      continue;
    }
    const admission = checkAdmission(definition, schedule.input, 'schedule');
    if (!admission.ok) {
      problems.push(`schedule "${schedule.name}": input: ${admission.error.message}`);
    }
  }
  if (problems.length > 0) throw new DefinitionError('schedules', problems);
}

/**
 * Writes the code's schedules (R41): new ones start at their first tick after the database's
 * now; one whose cron or time zone changed gets its next tick recomputed from now; a pause is
 * kept. Returns the names of the rows written.
 */
export async function syncSchedules(
  db: Db,
  schedules: ReadonlyMap<string, ScheduleDefinition>,
): Promise<string[]> {
  if (schedules.size === 0) return [];
  const now = await databaseNow(db);
  return scheduleUpsert(
    db,
    [...schedules.values()].map((schedule) => ({
      name: schedule.name,
      workflow: schedule.workflow,
      cron: schedule.cron,
      timezone: schedule.timezone,
      catchUp: schedule.catchUp,
      inputJson: JSON.stringify(schedule.input),
      nextTickAt: nextTick(schedule.cron, schedule.timezone, now),
    })),
  );
}
