import { describe, expect, inject, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { listenBackends, terminateBackends, unfinishedWorkflows } from './support/db-faults-checks';
import {
  awaitNewListeners,
  freezeListeners,
  isStopped,
  pickupLatencyMs,
  pickups,
  terminateFrozen,
} from './support/db-faults-listen';
import { linesStarting, logLines, startWorkerProcess } from './support/db-faults-processes';
import { faultChain } from './support/db-faults-workflows';

const database = useTestDatabase();
/** Long, so a pickup by polling and one by a wake-up cannot be mistaken for each other. */
const pollMs = 6_000;
/** A wake-up's pickup is well under this; a poll's is anywhere up to `pollMs`. */
const wokenMs = 1_000;

// The long version: long/lost-listen.test.ts.
describe('lost notifications', () => {
  it('a submit whose NOTIFY is lost is claimed by polling; the listener reconnects and wakes again', async () => {
    const { url, name } = database();
    const adminUrl = inject('adminDatabaseUrl');
    const engine = testEngine(url, { workflows: [faultChain] });
    await engine.migrate();
    const worker = startWorkerProcess(url, {
      load: 'chain',
      leaseMs: 5_000,
      pollMs,
      concurrency: 4,
      sweeper: true,
    });
    await worker.ready(60_000);
    const [listener] = await awaitNewListeners(adminUrl, name, [], 1);

    // Woken: with the listener there, pickups do not wait for the poll.
    const before = await pickups(engine, url, 3, 0, pollMs);
    expect(Math.max(...before)).toBeLessThan(wokenMs);

    // Lost: the listener is frozen, the submit's NOTIFY never arrives; the poll claims it.
    const frozen = await freezeListeners(adminUrl, name);
    expect(frozen).toEqual([listener]);
    const lost = await pickupLatencyMs(engine, url, 100, pollMs + 3_000);
    expect(lost).toBeLessThanOrEqual(pollMs + 1_000);
    expect(isStopped(listener as number)).toBe(true);

    // Reconnected: the frozen listener is terminated; a new one wakes the worker again.
    await terminateFrozen(adminUrl, name, frozen);
    await awaitNewListeners(adminUrl, name, frozen, 1);
    const after = await pickups(engine, url, 4, 200, pollMs);
    expect(Math.max(...after)).toBeLessThan(wokenMs);

    // Terminated again and again: it reconnects every time (each a new backend).
    let gone = await listenBackends(adminUrl, name);
    for (let round = 0; round < 5; round++) {
      await terminateBackends(adminUrl, name, 'listen');
      gone = [...gone, ...(await awaitNewListeners(adminUrl, name, gone, 1))];
    }
    const reconnects = linesStarting(logLines(worker), 'LISTEN causeway_wakeup: reconnecting');
    expect(reconnects.length).toBeGreaterThanOrEqual(6);
    const last = await pickups(engine, url, 3, 300, pollMs);
    expect(Math.max(...last)).toBeLessThan(wokenMs);
    console.info(
      `[lost-listen] pickup ms woken ${before.join('/')}, lost ${lost}, after reconnect ${after.join('/')}, after 5 more ${last.join('/')}; ${reconnects.length} reconnects`,
    );

    await waitFor(async () => (await unfinishedWorkflows(url)) === 0, { timeoutMs: 30_000 });
    expect(await logMismatches(url)).toEqual([]);
  }, 120_000);
});
