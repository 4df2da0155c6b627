import { type Logger, pino } from 'pino';

export type { Logger };

/** The default logger: pino JSON on stdout; `CAUSEWAY_LOG_LEVEL` sets the level. */
export function defaultLogger(): Logger {
  return pino({ level: process.env.CAUSEWAY_LOG_LEVEL ?? 'info' });
}

/**
 * Every line carries workflow id, task id, attempt and holder (R33). Lines that are not about
 * a task say so with nulls rather than leaving the fields out.
 */
export function engineLogger(root: Logger, holder: string): Logger {
  return root.child({ holder, workflowId: null, taskId: null, attempt: null });
}

export function taskLogger(
  root: Logger,
  fields: { holder: string; workflowId: string; taskId: string; attempt: number; step: string },
): Logger {
  return root.child(fields);
}
