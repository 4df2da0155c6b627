/**
 * Load with random SIGKILL and SIGSTOP (issue 19 §1): worker processes run one-step,
 * three-step (a non-reentrant middle step calling the platform) and event-waiting workflows,
 * submitted while they run, with events sent and schedules ticking, while a random worker is
 * killed (and respawned) and another stopped (sometimes past its lease) every few seconds.
 * After the faults stop, everything must be terminal within `livenessBoundMs`, and the
 * invariants (support/invariants.ts) hold.
 */
import { performance } from 'node:perf_hooks';
import type { Engine } from '@causeway/engine';
import { expect } from 'vitest';
import { type Platform, startPlatform } from '../../../examples/platform/server';
import { query, testEngine } from '../../helpers/engine';
import { waitFor } from '../../helpers/wait-for';
import { goEvent, loadSchedules, loadWorkflows } from '../fixtures/load-workflows';
import { type FaultCounts, injectFaults } from '../support/fault-injector';
import { assertInvariants, type InvariantCounts } from '../support/invariants';
import { createLedger } from '../support/ledger';
import { WorkerPool } from '../support/worker-pool';

export interface LoadFaultsConfig {
  readonly oneStep: number;
  readonly threeStep: number;
  readonly waiting: number;
  /** One in this many one-step workflows calls the platform. */
  readonly effectEvery: number;
  readonly workers: number;
  readonly concurrency: number;
  readonly leaseMs: number;
  /** Workflows per submitMany call, and the pause between calls (the submission's pace). */
  readonly batch: number;
  readonly batchPauseMs: number;
  readonly killEveryMs: number;
  readonly pauseEveryMs: number;
  readonly pauseMs: readonly [number, number];
  /** Faults go on this long after the last submit and event. */
  readonly faultTailMs: number;
  /** After the faults stop, every workflow is terminal within this. */
  readonly livenessBoundMs: number;
  readonly seed: number;
}

export interface LoadFaultsResult {
  readonly config: LoadFaultsConfig;
  readonly submitted: number;
  readonly scheduled: number;
  readonly eventsSent: number;
  readonly faults: FaultCounts;
  readonly faultPhaseMs: number;
  /** From the last fault (a SIGKILL) until every workflow was terminal. */
  readonly drainMs: number;
  readonly invariants: InvariantCounts;
  /** Non-reentrant steps: succeeded with one post, or dead with their effect uncertain. */
  readonly nonReentrant: { succeeded: number; deadUncertain: number };
}

/** Submits one kind of workflow, `batch` at a time; returns the ids. */
async function submitBatch(engine: Engine, name: string, inputs: readonly unknown[]) {
  const results = await engine.submitMany(inputs.map((input) => ({ name, input })));
  return results.map((result) => result.workflow.id);
}

/** The submission plan: batches of the three kinds, interleaved in proportion. */
function plan(config: LoadFaultsConfig): { name: string; inputs: unknown[] }[] {
  const total = config.oneStep + config.threeStep + config.waiting;
  const rounds = Math.max(1, Math.ceil(total / config.batch));
  const share = (count: number, round: number) =>
    Math.floor((count * (round + 1)) / rounds) - Math.floor((count * round) / rounds);
  const batches: { name: string; inputs: unknown[] }[] = [];
  let one = 0;
  let three = 0;
  let wait = 0;
  for (let round = 0; round < rounds; round += 1) {
    const ones = Array.from({ length: share(config.oneStep, round) }, () => {
      one += 1;
      return { n: one, effect: one % config.effectEvery === 0 };
    });
    const threes = Array.from({ length: share(config.threeStep, round) }, () => ({ n: ++three }));
    const waits = Array.from({ length: share(config.waiting, round) }, () => ({
      id: `w-${++wait}`,
    }));
    if (ones.length > 0) batches.push({ name: 'rel-one', inputs: ones });
    if (threes.length > 0) batches.push({ name: 'rel-three', inputs: threes });
    if (waits.length > 0) batches.push({ name: 'rel-wait', inputs: waits });
  }
  return batches;
}

const nonTerminal = async (url: string) => {
  const [row] = await query<{ n: number }>(
    url,
    "select count(*)::int as n from causeway_workflows where state not in ('succeeded', 'cancelled', 'dead')",
  );
  return row?.n ?? -1;
};

export async function runLoadFaults(
  databaseUrl: string,
  config: LoadFaultsConfig,
): Promise<LoadFaultsResult> {
  const refuse = {
    record: () => Promise.reject(new Error('the submitting engine runs no steps')),
  };
  const engine = testEngine(databaseUrl, {
    workflows: loadWorkflows({ ledger: refuse, platformUrl: 'http://127.0.0.1:1' }),
    leaseMs: config.leaseMs,
  });
  await engine.migrate();
  await createLedger(databaseUrl);
  const platform: Platform = await startPlatform();
  const pool = new WorkerPool({
    databaseUrl,
    platformUrl: platform.url,
    size: config.workers,
    leaseMs: config.leaseMs,
    concurrency: config.concurrency,
  });
  try {
    await pool.start();
    const faultStart = performance.now();
    const faults = injectFaults(pool, { ...config, leaseMs: config.leaseMs });
    const submitted: string[] = [];
    let pendingEvents: string[] = [];
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
    const batches = plan(config);
    for (const [index, batch] of batches.entries()) {
      submitted.push(...(await submitBatch(engine, batch.name, batch.inputs)));
      // Events go to the waits of earlier batches, so they have waited a while.
      await sendEvents(pendingEvents);
      pendingEvents =
        batch.name === 'rel-wait' ? batch.inputs.map((input) => (input as { id: string }).id) : [];
      // Each schedule is also triggered by hand now and then, beside its minute ticks.
      if (index % 20 === 0) {
        for (const { name } of loadSchedules) {
          await engine.triggerSchedule(name, { operator: 'reliability', reason: 'load' });
        }
      }
      await new Promise((resolve) => setTimeout(resolve, config.batchPauseMs));
    }
    await sendEvents(pendingEvents);
    await new Promise((resolve) => setTimeout(resolve, config.faultTailMs));
    // The faults end with a last SIGKILL (fault-injector.ts); the liveness bound counts from it.
    const faultsEnd = performance.now();
    const faultPhaseMs = faultsEnd - faultStart;
    const faultCounts = await faults.stop();
    for (const { name } of loadSchedules) {
      await engine.pauseSchedule(name, { operator: 'reliability', reason: 'drain' });
    }
    await waitFor(async () => (await nonTerminal(databaseUrl)) === 0, {
      timeoutMs: Math.max(1, config.livenessBoundMs - (performance.now() - faultsEnd)),
      intervalMs: 250,
      description: `every workflow terminal within ${config.livenessBoundMs} ms of the faults' end`,
    });
    const drainMs = performance.now() - faultsEnd;
    await pool.stop();

    const stats = platform.stats();
    const invariants = await assertInvariants({
      databaseUrl,
      submitted,
      ledger: true,
      effects: [...stats.posts, ...stats.assets],
    });
    const nonReentrant = await checkNonReentrant(databaseUrl, stats.posts);
    const [scheduled] = await query<{ n: number }>(
      databaseUrl,
      "select count(*)::int as n from causeway_workflows where starts_with(idempotency_key, 'schedule:')",
    );
    expect(invariants.workflows).toBe(submitted.length + (scheduled?.n ?? 0));
    return {
      config,
      submitted: submitted.length,
      scheduled: scheduled?.n ?? 0,
      eventsSent,
      faults: faultCounts,
      faultPhaseMs: Math.round(faultPhaseMs),
      drainMs: Math.round(drainMs),
      invariants,
      nonReentrant,
    };
  } finally {
    await platform.close();
  }
}

/**
 * Every non-reentrant step ended succeeded with exactly one post under its key, or dead with
 * `lease_expired_effect_uncertain` (at most one post); every other workflow succeeded.
 */
async function checkNonReentrant(
  url: string,
  posts: readonly { idempotencyKey: string | null }[],
): Promise<{ succeeded: number; deadUncertain: number }> {
  const perKey = new Map<string, number>();
  for (const post of posts) {
    if (post.idempotencyKey !== null) {
      perKey.set(post.idempotencyKey, (perKey.get(post.idempotencyKey) ?? 0) + 1);
    }
  }
  const tasks = await query<{ id: string; state: string; reason: string }>(
    url,
    `select t.id, t.state, last.reason from causeway_tasks t
       cross join lateral (select reason from causeway_transitions x
                            where x.task_id = t.id order by x.id desc limit 1) last
      where t.step = 'b'`,
  );
  const wrong = tasks.filter(
    (task) =>
      !(
        (task.state === 'succeeded' && perKey.get(`causeway:${task.id}`) === 1) ||
        (task.state === 'dead' && task.reason === 'lease_expired_effect_uncertain')
      ),
  );
  expect(wrong.slice(0, 20)).toEqual([]);
  const otherDead = await query(
    url,
    `select t.id, t.step, t.state from causeway_tasks t
      where t.state <> 'succeeded' and t.step <> 'b' and t.state <> 'pending' limit 20`,
  );
  expect(otherDead).toEqual([]);
  return {
    succeeded: tasks.filter((task) => task.state === 'succeeded').length,
    deadUncertain: tasks.filter((task) => task.state === 'dead').length,
  };
}
