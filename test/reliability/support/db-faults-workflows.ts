import { setTimeout as sleep } from 'node:timers/promises';
import { defineWorkflow, event, StepError, schedule, step } from '@causeway/workflow';
import { z } from 'zod';

/**
 * Workflows of the database-fault scenarios, loaded by the parent and by every child.
 *
 * `fault-chain`: a fan-out and a join (first → left, right → join), reentrant, so a step
 * whose result was lost to the fault (its lease then runs out) is simply run again, and
 * the workflow's state must still aggregate its tasks' (R25 and the aggregation rule).
 */
const chainInput = z.object({ n: z.number().int(), stepMs: z.number().int().min(0) });
type ChainInput = z.output<typeof chainInput>;

/** Steps of the chain: they wait on their signal, so a lease given up stops them. */
const chainStep = (after: string[]) =>
  step<ChainInput>({
    after,
    queue: 'q-faults',
    reentrant: true,
    maxAttempts: 50,
    backoff: { initialIntervalMs: 50, maximumIntervalMs: 500 },
    run: async (ctx) => {
      await sleep(ctx.input.stepMs, undefined, { signal: ctx.signal });
      return { n: ctx.input.n, attempt: ctx.attempt };
    },
  });

export const faultChain = defineWorkflow({
  name: 'fault-chain',
  input: chainInput,
  steps: {
    first: chainStep([]),
    left: chainStep(['first']),
    right: chainStep(['first']),
    join: chainStep(['left', 'right']),
  },
});

/**
 * `fault-hold`: its first attempt runs until its signal aborts (the worker gives up a lease
 * the database did not confirm in time), the next one returns at once.
 */
export const faultHold = defineWorkflow({
  name: 'fault-hold',
  input: z.object({ n: z.number().int() }),
  steps: {
    hold: step({
      queue: 'q-faults',
      reentrant: true,
      maxAttempts: 5,
      backoff: { initialIntervalMs: 50, maximumIntervalMs: 500 },
      run: async (ctx) => {
        if (ctx.attempt === 1) await sleep(120_000, undefined, { signal: ctx.signal });
        return { attempt: ctx.attempt };
      },
    }),
  },
});

/** The three clocks of the skew scenario: each worker serves its own queue. */
export const skewClocks = ['normal', 'ahead', 'behind'] as const;
export type SkewClock = (typeof skewClocks)[number];

/** How long the skew workflow's steps take; the lease of the skew workers is shorter. */
export const skewTimings = Object.freeze({
  leaseMs: 1_500,
  /** `slow` runs past two leases: only renewals keep it. */
  slowMs: 3_500,
  /** `flaky` fails twice; the next attempt waits for this backoff. */
  backoffMs: 200,
  /** `delayed` is queued this long after `flaky` succeeded (R36). */
  delayMs: 700,
  /** `timed` times out on its first attempt. */
  timeoutMs: 300,
  /** `wait` ends by the sweeper (its event never comes). */
  waitMs: 1_000,
});

/**
 * One workflow per clock, on that clock's queue: every time-dependent decision of a worker
 * (backoff, delay, renewal, attempt timeout; the wait's timeout is the sweeper's) happens
 * in the worker with that clock.
 */
export function skewWorkflow(clock: SkewClock) {
  const queue = `q-${clock}`;
  const t = skewTimings;
  return defineWorkflow({
    name: `skew-${clock}`,
    input: z.object({ n: z.number().int() }),
    steps: {
      flaky: step({
        queue,
        maxAttempts: 3,
        backoff: { initialIntervalMs: t.backoffMs, backoffCoefficient: 1 },
        run: (ctx) => {
          if (ctx.attempt < 3) throw new StepError('unavailable', `attempt ${ctx.attempt} fails`);
          return { attempt: ctx.attempt };
        },
      }),
      delayed: step({ after: ['flaky'], queue, delayMs: t.delayMs, run: () => ({ ok: true }) }),
      slow: step({
        after: ['delayed'],
        queue,
        run: async (ctx) => {
          await sleep(t.slowMs, undefined, { signal: ctx.signal });
          return { ok: true };
        },
      }),
      timed: step({
        after: ['slow'],
        queue,
        timeoutMs: t.timeoutMs,
        maxAttempts: 2,
        backoff: { initialIntervalMs: 10, maximumIntervalMs: 10 },
        run: async (ctx) => {
          if (ctx.attempt === 1) await sleep(10 * t.timeoutMs, undefined, { signal: ctx.signal });
          return { attempt: ctx.attempt };
        },
      }),
      wait: event({
        after: ['timed'],
        name: `skew.${clock}`,
        key: 'never-sent',
        timeoutMs: t.waitMs,
        onTimeout: { timedOut: true },
      }),
    },
  });
}

/** Only a wait: the sweeper ends it (run with one clock's worker alone, it is that one's). */
export function skewWait(clock: SkewClock) {
  return defineWorkflow({
    name: `skew-wait-${clock}`,
    input: z.object({ n: z.number().int() }),
    steps: {
      wait: event({
        name: `skew.${clock}.alone`,
        key: 'never-sent',
        timeoutMs: skewTimings.waitMs,
        onTimeout: { timedOut: true },
      }),
    },
  });
}

/** Every skew workflow: each skew worker defines all (a sweeper may end any one's wait). */
export const allSkewWorkflows = skewClocks.flatMap((clock) => [
  skewWorkflow(clock),
  skewTick(clock),
  skewWait(clock),
]);

/** The tiny workflow each clock's schedule submits (on its own queue). */
export function skewTick(clock: SkewClock) {
  return defineWorkflow({
    name: `skew-tick-${clock}`,
    input: z.object({ clock: z.string() }),
    steps: { only: step({ queue: `q-${clock}`, run: () => ({ ok: true }) }) },
  });
}

/** A schedule per clock, each declared only by the engine of the worker with that clock. */
export function skewSchedule(clock: SkewClock) {
  return schedule({
    name: `skew-every-minute-${clock}`,
    workflow: skewTick(clock),
    cron: '* * * * *',
    input: { clock },
  });
}

/** Everything a parent engine must define to submit and read the scenarios' workflows. */
export const allFaultWorkflows = [faultChain, faultHold, ...allSkewWorkflows];
