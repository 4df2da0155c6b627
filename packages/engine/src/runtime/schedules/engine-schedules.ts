import {
  type ScheduleDefinition,
  scheduleRegistry,
  type WorkflowRegistry,
} from '@causeway/workflow/internal';
import type { Logger } from '../../logger';
import type { SubmitContext } from '../operations/submit';
import type { ScheduleContext } from './schedule-context';
import { checkSchedules, syncSchedules } from './schedule-sync';

/**
 * The schedules of one engine (R40, R41): checked against its definitions now, and written to
 * the database once, the first time anything needs them (a worker starting, an operation).
 */
export function engineScheduleContext(options: {
  readonly schedules: readonly ScheduleDefinition[];
  readonly definitions: WorkflowRegistry;
  readonly submit: SubmitContext;
  readonly logger: Logger;
  readonly intervalMs: number;
}): ScheduleContext {
  const schedules = scheduleRegistry(options.schedules);
  checkSchedules(schedules, options.definitions);
  let synced: Promise<void> | null = null;
  const ready = (): Promise<void> => {
    synced ??= syncSchedules(options.submit.db, schedules).then(
      (written) => {
        if (written.length > 0) {
          options.logger.info({ schedules: written }, 'schedules written from code');
        }
      },
      (error: unknown) => {
        // Not remembered: the next caller tries again (the migration may not have run yet).
        synced = null;
        throw error;
      },
    );
    return synced;
  };
  return {
    submit: options.submit,
    schedules,
    logger: options.logger,
    intervalMs: options.intervalMs,
    ready,
  };
}
