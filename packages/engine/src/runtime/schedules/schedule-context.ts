import type { ScheduleDefinition } from '@causeway/workflow';
import type { Logger } from '../../logger';
import type { SubmitContext } from '../operations/submit';

/** What the schedules of one engine share (R40, R41). */
export interface ScheduleContext {
  readonly submit: SubmitContext;
  /** The schedules this engine's code declares, by name. */
  readonly schedules: ReadonlyMap<string, ScheduleDefinition>;
  /** Engine-level lines. */
  readonly logger: Logger;
  /** How often a worker's scheduler looks for due ticks (the sweep interval). */
  readonly intervalMs: number;
  /** Resolves once the code's schedules are written to the database (at engine start, R41). */
  readonly ready: () => Promise<void>;
}

/**
 * A tick found this long after its time or less is on time, not missed: `catchUp: 'none'`
 * still submits it. Three passes of the scheduler, and at least 10 s.
 */
export function onTimeMs(context: ScheduleContext): number {
  return Math.max(10_000, 3 * context.intervalMs);
}
