import { query } from '../../helpers/engine';
import { type LogLine, linesStarting } from './db-faults-processes';

/**
 * The clock-skew scenario's readings: what a skew workflow's log says about each timing
 * decision, on the database clock (transitions' `at`, R11), and how far a child's own clock
 * was off.
 */

type Edge = {
  readonly step: string | null;
  readonly reason: string;
  readonly to: string;
  readonly at: Date;
  readonly category: string | null;
};

/** The timings one skew workflow went through, ms on the database clock. */
export interface SkewTimeline {
  /** `step:reason` of every task edge in log order: identical for every clock. */
  readonly shape: readonly string[];
  /** From each retry of `flaky` being scheduled to its next claim. */
  readonly retryGapsMs: readonly number[];
  /** From `flaky` succeeding to `delayed` being claimed (the step's delay). */
  readonly delayedMs: number;
  /** From `slow` claimed to `slow` completed (past two leases: renewals). */
  readonly slowMs: number;
  /** From `timed`'s first claim to its timeout. */
  readonly timedOutAfterMs: number;
  /** From `wait` waiting to the sweeper ending it. */
  readonly waitedMs: number;
}

async function edges(databaseUrl: string, workflowId: string): Promise<Edge[]> {
  return query<Edge>(
    databaseUrl,
    `select step, reason, to_state as "to", at, error_category as category
       from causeway_transitions where workflow_id = $1 and task_id is not null order by id`,
    [workflowId],
  );
}

const between = (from: Edge | undefined, to: Edge | undefined): number =>
  from === undefined || to === undefined ? Number.NaN : to.at.getTime() - from.at.getTime();

export async function skewTimeline(databaseUrl: string, workflowId: string): Promise<SkewTimeline> {
  const log = await edges(databaseUrl, workflowId);
  const of = (step: string) => log.filter((edge) => edge.step === step);
  const flaky = of('flaky');
  const retryGapsMs = flaky.flatMap((edge, index) =>
    edge.reason === 'retry_scheduled'
      ? [
          between(
            edge,
            flaky.slice(index + 1).find((next) => next.reason === 'lease_acquired'),
          ),
        ]
      : [],
  );
  const claim = (step: string) => of(step).find((edge) => edge.reason === 'lease_acquired');
  const done = (step: string) => of(step).find((edge) => edge.to === 'succeeded');
  const timed = of('timed');
  return {
    shape: log.map(
      (edge) => `${edge.step}:${edge.reason}${edge.category ? `/${edge.category}` : ''}`,
    ),
    retryGapsMs,
    delayedMs: between(done('flaky'), claim('delayed')),
    slowMs: between(claim('slow'), done('slow')),
    timedOutAfterMs: between(
      claim('timed'),
      timed.find((edge) => edge.reason === 'retry_scheduled'),
    ),
    waitedMs: waitedMs(of('wait')),
  };
}

/** From the wait's edge into `waiting` to the edge out of it. */
export function waitedMs(waitEdges: readonly Edge[]): number {
  const index = waitEdges.findIndex((edge) => edge.to === 'waiting');
  return between(waitEdges[index], waitEdges[index + 1]);
}

/** The wait of a `skew-wait-*` workflow, and who ended it (the sweeper's holder). */
export async function aloneWait(
  databaseUrl: string,
  workflowId: string,
): Promise<{ waitedMs: number; actor: string }> {
  const rows = await query<Edge & { actor: string }>(
    databaseUrl,
    `select step, reason, to_state as "to", at, error_category as category, actor
       from causeway_transitions where workflow_id = $1 and task_id is not null order by id`,
    [workflowId],
  );
  return { waitedMs: waitedMs(rows), actor: rows.at(-1)?.actor ?? 'none' };
}

/**
 * How far a child's clock is off ours, ms: its `worker started` line's `time` (its
 * Date.now()) against when we saw the process come up (`readyAt`, our Date.now()).
 */
export function clockOffsetMs(lines: readonly LogLine[], readyAt: number): number {
  const [started] = linesStarting(lines, 'worker started');
  return started === undefined ? Number.NaN : started.time - readyAt;
}

/** The millisecond timestamp in a UUIDv7 (its first 48 bits): the clock of who made it. */
export function uuidV7Ms(id: string): number {
  return Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}
