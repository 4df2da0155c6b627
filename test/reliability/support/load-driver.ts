/**
 * The load every reliability scenario runs under: an engine in the test process that submits
 * (it runs no steps), the example platform, and worker processes (worker-pool.ts) running
 * fixtures/load-workflows.ts. `driveLoad` submits the three kinds in interleaved batches at a
 * set pace and sends the waits' events one batch later, so submissions and events arrive while
 * the workers run.
 */
import type { Engine } from '@causeway/engine';
import { type Platform, startPlatform } from '../../../examples/platform/server';
import { query, testEngine } from '../../helpers/engine';
import { goEvent, loadWorkflows, submitOnlyHooks } from '../fixtures/load-workflows';
import { createLedger } from './ledger';
import { WorkerPool } from './worker-pool';

export interface LoadShape {
  readonly oneStep: number;
  readonly threeStep: number;
  readonly waiting: number;
  /** One in this many one-step workflows calls the platform. */
  readonly effectEvery: number;
  /** Workflows per submitMany call, and the pause between calls (the submission's pace). */
  readonly batch: number;
  readonly batchPauseMs: number;
  /**
   * Backpressure: no batch is submitted while more workflows than this are live, so the
   * faults keep landing on running work and the backlog left when they stop is bounded.
   */
  readonly maxBacklog: number;
}

export interface LoadRig {
  readonly engine: Engine;
  readonly platform: Platform;
  readonly pool: WorkerPool;
}

/** The submitting engine, the ledger table, the platform and the started worker processes. */
export async function startLoadRig(
  databaseUrl: string,
  options: { readonly workers: number; readonly concurrency: number; readonly leaseMs: number },
): Promise<LoadRig> {
  const engine = testEngine(databaseUrl, {
    workflows: loadWorkflows(submitOnlyHooks),
    leaseMs: options.leaseMs,
  });
  await engine.migrate();
  await createLedger(databaseUrl);
  const platform = await startPlatform();
  const pool = new WorkerPool({
    databaseUrl,
    platformUrl: platform.url,
    size: options.workers,
    leaseMs: options.leaseMs,
    concurrency: options.concurrency,
  });
  try {
    await pool.start();
  } catch (error) {
    await platform.close();
    throw error;
  }
  return { engine, platform, pool };
}

/** The submission plan: batches of the three kinds, interleaved in proportion. */
function plan(shape: LoadShape): { name: string; inputs: unknown[] }[] {
  const total = shape.oneStep + shape.threeStep + shape.waiting;
  const rounds = Math.max(1, Math.ceil(total / shape.batch));
  const share = (count: number, round: number) =>
    Math.floor((count * (round + 1)) / rounds) - Math.floor((count * round) / rounds);
  const batches: { name: string; inputs: unknown[] }[] = [];
  let one = 0;
  let three = 0;
  let wait = 0;
  for (let round = 0; round < rounds; round += 1) {
    const ones = Array.from({ length: share(shape.oneStep, round) }, () => {
      one += 1;
      return { n: one, effect: one % shape.effectEvery === 0 };
    });
    const threes = Array.from({ length: share(shape.threeStep, round) }, () => ({ n: ++three }));
    const waits = Array.from({ length: share(shape.waiting, round) }, () => ({
      id: `w-${++wait}`,
    }));
    if (ones.length > 0) batches.push({ name: 'rel-one', inputs: ones });
    if (threes.length > 0) batches.push({ name: 'rel-three', inputs: threes });
    if (waits.length > 0) batches.push({ name: 'rel-wait', inputs: waits });
  }
  return batches;
}

export interface LoadRun {
  readonly submitted: string[];
  readonly eventsSent: number;
}

/** Submits the load's batches at its pace (and backpressure). */
export async function driveLoad(
  databaseUrl: string,
  engine: Engine,
  shape: LoadShape,
  hooks: {
    /** Runs after each batch. */
    readonly between?: (index: number) => Promise<void>;
    /** Runs on every poll, also while backpressure holds the next batch: throws to stop. */
    readonly check?: () => void;
  } = {},
): Promise<LoadRun> {
  const submitted: string[] = [];
  let eventsSent = 0;
  const sendEvents = async (keys: readonly string[]) => {
    for (let at = 0; at < keys.length; at += 500) {
      const slice = keys.slice(at, at + 500);
      await engine.sendEvents(
        slice.map((key) => ({ name: goEvent, key, payload: { key }, idempotencyKey: key })),
      );
      eventsSent += slice.length;
    }
  };
  let pendingEvents: string[] = [];
  for (const [index, batch] of plan(shape).entries()) {
    hooks.check?.();
    while ((await nonTerminalCount(databaseUrl)) > shape.maxBacklog) {
      hooks.check?.();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const results = await engine.submitMany(
      batch.inputs.map((input) => ({ name: batch.name, input })),
    );
    submitted.push(...results.map((result) => result.workflow.id));
    // Events go to the waits of the batch before, so they have waited a while.
    await sendEvents(pendingEvents);
    pendingEvents =
      batch.name === 'rel-wait' ? batch.inputs.map((input) => (input as { id: string }).id) : [];
    await hooks.between?.(index);
    await new Promise((resolve) => setTimeout(resolve, shape.batchPauseMs));
  }
  await sendEvents(pendingEvents);
  return { submitted, eventsSent };
}

/** Workflows not yet terminal, but for `exempt` (e.g. ones parked on purpose). */
export async function nonTerminalCount(
  databaseUrl: string,
  exempt: readonly string[] = [],
): Promise<number> {
  const [row] = await query<{ n: number }>(
    databaseUrl,
    `select count(*)::int as n from causeway_workflows
      where state not in ('succeeded', 'cancelled', 'dead') and id <> all($1::uuid[])`,
    [exempt],
  );
  return row?.n ?? -1;
}
