import { code, instant } from './format';
import { table } from './table';

/** The attempts of a task as `status` asks for them (R56). */
export const attemptsSelection =
  'attempts { attempt epoch holder leasedAt endedAt outcome reason refusedAt }';

/** One claim of a task (GraphQL `Attempt`). */
export interface AttemptView {
  attempt: number;
  epoch: number;
  holder: string;
  leasedAt: string;
  endedAt: string | null;
  outcome: string;
  reason: string | null;
  refusedAt: string | null;
}

/**
 * Every task's attempts as one table, in step order and then claim order: `STEP`, `ATTEMPT`,
 * `EPOCH`, `HOLDER`, `LEASED`, `ENDED`, `OUTCOME` (a stale one with when its result was
 * refused), `REASON` (of the edge that ended it). Null when no task was claimed yet.
 */
export function attemptsTable(
  tasks: readonly { readonly step: string; readonly attempts: readonly AttemptView[] }[],
  now: Date,
): string | null {
  const rows = tasks.flatMap((task) =>
    task.attempts.map((attempt) => [
      task.step,
      String(attempt.attempt),
      String(attempt.epoch),
      attempt.holder,
      instant(attempt.leasedAt, now),
      instant(attempt.endedAt, now),
      attempt.refusedAt === null
        ? code(attempt.outcome)
        : `${code(attempt.outcome)}: result refused ${instant(attempt.refusedAt, now)}`,
      code(attempt.reason),
    ]),
  );
  if (rows.length === 0) return null;
  return table(
    ['STEP', 'ATTEMPT', 'EPOCH', 'HOLDER', 'LEASED', 'ENDED', 'OUTCOME', 'REASON'],
    rows,
  );
}
