import type { Engine } from '@causeway/engine';
import { expect } from 'vitest';
import { libfaketimePath } from '../../../scripts/test-programs';
import { logMismatches, query } from '../../helpers/engine';
import { waitFor } from '../../helpers/wait-for';
import { unfinishedWorkflows } from './db-faults-checks';
import { logLines, startWorkerProcess } from './db-faults-processes';
import {
  aloneWait,
  clockOffsetMs,
  type SkewTimeline,
  skewTimeline,
  uuidV7Ms,
} from './db-faults-skew';
import { type SkewClock, skewClocks, skewTimings } from './db-faults-workflows';

/**
 * The clock-skew scenario: a worker process per clock (on time, 5 h ahead, 5 h behind, the
 * last two under libfaketime), each serving its clock's queue, so every timing decision of a
 * workflow is taken by the worker with that clock. Then the schedules' next tick, and a
 * wait that only the behind worker's sweeper can end.
 */
export const skewOffsets: Readonly<Record<SkewClock, string | undefined>> = {
  normal: undefined,
  ahead: '+5h',
  behind: '-5h',
};
const expectedOffsetMs: Readonly<Record<SkewClock, number>> = {
  normal: 0,
  ahead: 5 * 3_600_000,
  behind: -5 * 3_600_000,
};
/** Slack for a claim after a run_at or a sweep after a timeout on a loaded machine. */
const slackMs = 2_000;

export interface SkewResult {
  readonly offsets: Record<SkewClock, number>;
  readonly timelines: Record<SkewClock, SkewTimeline[]>;
  /** Per clock: its schedule's tick workflow's UUIDv7 time minus our clock, ms. */
  readonly tickIdSkewMs: Record<SkewClock, number>;
  readonly aloneBehind: { waitedMs: number; actor: string };
  readonly behindHolder: string;
}

export async function runSkewScenario(
  engine: Engine,
  databaseUrl: string,
  perClock: number,
): Promise<SkewResult> {
  const workers = skewClocks.map((clock) => {
    const faketime = skewOffsets[clock];
    return startWorkerProcess(databaseUrl, {
      load: `skew:${clock}`,
      leaseMs: skewTimings.leaseMs,
      pollMs: 200,
      // Every workflow's step runs at once: its timings are its clock's, not a queue's.
      concurrency: perClock,
      sweeper: true,
      ...(faketime === undefined ? {} : { faketime }),
    });
  });
  const ready = await Promise.all(
    workers.map(async (worker) => ({ ...(await worker.ready(60_000)), at: Date.now() })),
  );

  const submitted = await Promise.all(
    skewClocks.flatMap((clock) =>
      Array.from({ length: perClock }, async (_, n) => ({
        clock,
        id: (await engine.submit(`skew-${clock}`, { n })).workflow.id,
      })),
    ),
  );
  await waitFor(async () => (await unfinishedWorkflows(databaseUrl)) === 0, {
    timeoutMs: 60_000 + perClock * 10_000,
    intervalMs: 200,
    description: 'the skew workflows finished',
  });
  const timelines = Object.fromEntries(skewClocks.map((clock) => [clock, [] as SkewTimeline[]]));
  for (const { clock, id } of submitted) {
    timelines[clock]?.push(await skewTimeline(databaseUrl, id));
  }

  const tickIdSkewMs = await nextScheduleTick(databaseUrl);
  // Read now, not at `ready`: a child's stdout may reach us after its IPC message.
  const offsets = Object.fromEntries(
    workers.map((worker, index) => [
      skewClocks[index],
      clockOffsetMs(logLines(worker), ready[index]?.at ?? Number.NaN),
    ]),
  ) as Record<SkewClock, number>;

  // Only the behind worker left: its sweeper alone ends this wait.
  await Promise.all(workers.slice(0, 2).map((worker) => worker.stop()));
  const { workflow } = await engine.submit('skew-wait-behind', { n: 0 });
  await waitFor(async () => (await unfinishedWorkflows(databaseUrl)) === 0, {
    timeoutMs: 20_000,
    description: 'the wait ended by the behind sweeper',
  });
  expect(await logMismatches(databaseUrl)).toEqual([]);
  return {
    offsets,
    timelines: timelines as Record<SkewClock, SkewTimeline[]>,
    tickIdSkewMs,
    aloneBehind: await aloneWait(databaseUrl, workflow.id),
    behindHolder: ready[2]?.holder ?? 'unknown',
  };
}

/**
 * Moves the database clock to just past the next minute (the schedules are every minute)
 * and waits for each clock's scheduler to submit that tick. Returns, per clock, how far the
 * tick workflow's UUIDv7 time lies from ours: its id was made on the scheduler's clock.
 */
async function nextScheduleTick(databaseUrl: string): Promise<Record<SkewClock, number>> {
  const [now] = await query<{ ms: string }>(
    databaseUrl,
    `select (extract(epoch from causeway_now()) * 1000)::bigint as ms`,
  );
  const nowMs = Number(now?.ms);
  const tick = Math.ceil((nowMs + 1) / 60_000) * 60_000;
  await query(databaseUrl, 'update causeway_clock set offset_ms = offset_ms + $1', [
    tick + 300 - nowMs,
  ]);
  const rows = await waitFor(
    async () => {
      const found = await query<{ name: string; id: string; state: string }>(
        databaseUrl,
        `select s.name, s.last_workflow_id as id, w.state from causeway_schedules s
           join causeway_workflows w on w.id = s.last_workflow_id
          where s.last_tick_at = $1`,
        [new Date(tick)],
      );
      const done = found.filter((row) => row.state === 'succeeded');
      return done.length === skewClocks.length ? { done, seenAt: Date.now() } : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 100, description: "every clock's schedule ticked" },
  );
  // Against our clock when we saw them (seconds after they were made), not the tick: the
  // database clock was moved.
  return Object.fromEntries(
    skewClocks.map((clock) => {
      const row = rows.done.find((candidate) => candidate.name.endsWith(`-${clock}`));
      return [clock, row === undefined ? Number.NaN : uuidV7Ms(row.id) - rows.seenAt];
    }),
  ) as Record<SkewClock, number>;
}

/** Every clock behaved as the one on time, every timing on the database clock. */
export function expectSkewIdentical(result: SkewResult): void {
  const t = skewTimings;
  console.info(
    `[clock-skew] child clock offsets ${JSON.stringify(result.offsets)}, tick id skew ${JSON.stringify(result.tickIdSkewMs)}, ` +
      `alone wait ${result.aloneBehind.waitedMs} ms; ` +
      skewClocks
        .map((clock) => {
          const [first] = result.timelines[clock];
          return `${clock}: retry gaps ${first?.retryGapsMs.join('/')}, delayed ${first?.delayedMs}, slow ${first?.slowMs}, timed out after ${first?.timedOutAfterMs}, waited ${first?.waitedMs}`;
        })
        .join('; '),
  );
  const [reference] = result.timelines.normal;
  expect(reference?.shape.some((edge) => edge.includes('lease_expired'))).toBe(false);
  for (const clock of skewClocks) {
    // The child's clock really was off (libfaketime moved Date.now()).
    expect(
      Math.abs(result.offsets[clock] - expectedOffsetMs[clock]),
      `the ${clock} worker's clock is ${result.offsets[clock]} ms off, not ` +
        `${expectedOffsetMs[clock]} ms: libfaketime (${libfaketimePath}) did not take effect`,
    ).toBeLessThan(60_000);
    // UUIDv7 ids made there carry that clock: they sort by it, not by when they were made.
    expect(Math.abs(result.tickIdSkewMs[clock] - expectedOffsetMs[clock])).toBeLessThan(60_000);
    for (const timeline of result.timelines[clock]) {
      expect(timeline.shape, clock).toEqual(reference?.shape);
      for (const gap of timeline.retryGapsMs) expect(gap).toBeLessThan(t.backoffMs + slackMs);
      expect(timeline.delayedMs, `${clock} delay`).toBeGreaterThanOrEqual(t.delayMs);
      expect(timeline.delayedMs).toBeLessThan(t.delayMs + slackMs);
      expect(timeline.slowMs, `${clock} slow`).toBeGreaterThanOrEqual(t.slowMs);
      expect(timeline.slowMs).toBeLessThan(t.slowMs + slackMs);
      expect(timeline.timedOutAfterMs, `${clock} timeout`).toBeGreaterThanOrEqual(t.timeoutMs);
      expect(timeline.timedOutAfterMs).toBeLessThan(t.timeoutMs + slackMs);
      expect(timeline.waitedMs, `${clock} wait`).toBeGreaterThanOrEqual(t.waitMs);
      expect(timeline.waitedMs).toBeLessThan(t.waitMs + slackMs);
    }
  }
  expect(result.aloneBehind.actor).toBe(`sweeper:${result.behindHolder}`);
  expect(result.aloneBehind.waitedMs).toBeGreaterThanOrEqual(t.waitMs);
  expect(result.aloneBehind.waitedMs).toBeLessThan(t.waitMs + slackMs);
}
