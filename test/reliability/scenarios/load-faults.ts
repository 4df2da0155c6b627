/**
 * Load with random SIGKILL and SIGSTOP (issue 19 §1): worker processes run one-step,
 * three-step (a non-reentrant middle step calling the platform) and event-waiting workflows,
 * submitted while they run, with events sent and schedules ticking, while a random worker is
 * killed (and respawned) and another stopped (sometimes past its lease) every few seconds.
 * After the faults stop, everything must be terminal within `livenessBoundMs`, and the
 * invariants (support/invariants.ts) hold.
 */
import { performance } from 'node:perf_hooks';
import { expect } from 'vitest';
import { query } from '../../helpers/engine';
import { loadSchedules } from '../fixtures/load-workflows';
import { drainWithin } from '../support/drain';
import { type FaultCounts, injectFaults } from '../support/fault-injector';
import { assertInvariants, type InvariantCounts } from '../support/invariants';
import { driveLoad, type LoadShape, nonTerminalCount, startLoadRig } from '../support/load-driver';
import { checkStaleAttempts } from '../support/stale-attempts';

export interface LoadFaultsConfig extends LoadShape {
  readonly workers: number;
  readonly concurrency: number;
  readonly leaseMs: number;
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
  /** Workflows finished per second over the whole run (faults and drain). */
  readonly workflowsPerSecond: number;
  readonly invariants: InvariantCounts;
  /** Non-reentrant steps: succeeded with one post, or dead with their effect uncertain. */
  readonly nonReentrant: { succeeded: number; deadUncertain: number };
  /** Results of stopped workers refused after their leases were lost: stale attempts (R56). */
  readonly staleAttempts: number;
}

export async function runLoadFaults(
  databaseUrl: string,
  config: LoadFaultsConfig,
): Promise<LoadFaultsResult> {
  const { engine, platform, pool } = await startLoadRig(databaseUrl, config);
  try {
    const faultStart = performance.now();
    const faults = injectFaults(pool, { ...config, leaseMs: config.leaseMs });
    const started = performance.now();
    const { submitted, eventsSent } = await driveLoad(databaseUrl, engine, config, {
      check: () => pool.assertNoCrash(),
      async between(index) {
        // Each schedule is also triggered by hand now and then, beside its minute ticks.
        if (index % 20 !== 0) return;
        const live = await nonTerminalCount(databaseUrl);
        console.log(
          `load: batch ${index}, ${live} workflows live at ${Math.round(performance.now() - started)} ms`,
        );
        for (const { name } of loadSchedules) {
          await engine.triggerSchedule(name, { operator: 'reliability', reason: 'load' });
        }
      },
    });
    await new Promise((resolve) => setTimeout(resolve, config.faultTailMs));
    // The faults end with a last SIGKILL (fault-injector.ts); the liveness bound counts from it.
    const faultsEnd = performance.now();
    const faultPhaseMs = faultsEnd - faultStart;
    const faultCounts = await faults.stop();
    for (const { name } of loadSchedules) {
      await engine.pauseSchedule(name, { operator: 'reliability', reason: 'drain' });
    }
    const drainMs = await drainWithin(databaseUrl, faultsEnd, config.livenessBoundMs, {
      check: () => pool.assertNoCrash(),
    });
    await pool.stop();

    const stats = platform.stats();
    const invariants = await assertInvariants({
      databaseUrl,
      submitted,
      ledger: true,
      effects: [...stats.posts, ...stats.assets],
    });
    const nonReentrant = await checkNonReentrant(databaseUrl, stats.posts);
    const staleAttempts = await checkStaleAttempts(databaseUrl, engine);
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
      workflowsPerSecond: Math.round((invariants.workflows * 1000) / (faultPhaseMs + drainMs)),
      invariants,
      nonReentrant,
      staleAttempts,
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
    `select distinct on (t.id) t.id, t.state, x.reason from causeway_tasks t
       join causeway_transitions x on x.task_id = t.id
      where t.step = 'b' order by t.id, x.id desc`,
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
