import { setTimeout as sleep } from 'node:timers/promises';
import { expect, inject } from 'vitest';
import { logMismatches, testEngine } from '../../helpers/engine';
import { waitFor } from '../../helpers/wait-for';
import { listenBackends, terminateBackends, unfinishedWorkflows } from './db-faults-checks';
import {
  awaitNewListeners,
  freezeListeners,
  isStopped,
  pickupLatencyMs,
  pickups,
  terminateFrozen,
} from './db-faults-listen';
import { linesStarting, logLines, startWorkerProcess } from './db-faults-processes';
import { faultChain } from './db-faults-workflows';

/** Long, so a pickup by polling and one by a wake-up cannot be mistaken for each other. */
export const listenPollMs = 6_000;
/** A wake-up's pickup is well under this; a poll's is anywhere up to `listenPollMs`. */
export const wokenMs = 1_000;

/**
 * The lost-LISTEN scenario, `cycles` times: pickups while the listener is there (woken), two
 * while it is frozen (their NOTIFY lost: claimed by the poll, the listener still frozen),
 * then the frozen listener terminated and pickups again once a new one is there (woken
 * again). Then `terminations` plain pg_terminate_backend of the listener, each followed by
 * a new one, and pickups woken once more.
 */
export async function expectPollingCoversLostListen(
  database: { readonly url: string; readonly name: string },
  options: { readonly cycles: number; readonly terminations: number },
): Promise<void> {
  const { url, name } = database;
  const adminUrl = inject('adminDatabaseUrl');
  const engine = testEngine(url, { workflows: [faultChain] });
  await engine.migrate();
  const worker = startWorkerProcess(url, {
    load: 'chain',
    leaseMs: 5_000,
    pollMs: listenPollMs,
    concurrency: 4,
    sweeper: true,
  });
  await worker.ready(60_000);
  let gone: number[] = [];
  let n = 0;
  const woken: number[] = [];
  const lost: number[] = [];
  const polled: number[] = [];
  for (let cycle = 0; cycle < options.cycles; cycle++) {
    const [listener] = await awaitNewListeners(adminUrl, name, gone, 1);
    woken.push(...(await pickups(engine, url, 3, n, listenPollMs)));
    n += 3;
    const frozen = await freezeListeners(adminUrl, name);
    expect(frozen).toEqual([listener]);
    // Claimed though its NOTIFY is lost; the next, submitted once the worker is idle again,
    // waits for the poll that idle worker has just begun: proof it is the poll, not a wake-up.
    lost.push(await pickupLatencyMs(engine, url, n++, listenPollMs + 3_000));
    await waitFor(async () => (await unfinishedWorkflows(url)) === 0, { timeoutMs: 10_000 });
    // The claim loop's last look (a finished step wakes it) is done within this.
    await sleep(300);
    polled.push(await pickupLatencyMs(engine, url, n++, listenPollMs + 3_000));
    expect(isStopped(listener as number)).toBe(true);
    await terminateFrozen(adminUrl, name, frozen);
    gone = [...gone, ...frozen];
  }
  await awaitNewListeners(adminUrl, name, gone, 1);
  woken.push(...(await pickups(engine, url, 3, n, listenPollMs)));
  n += 3;
  gone = await listenBackends(adminUrl, name);
  for (let round = 0; round < options.terminations; round++) {
    await terminateBackends(adminUrl, name, 'listen');
    gone = [...gone, ...(await awaitNewListeners(adminUrl, name, gone, 1))];
  }
  woken.push(...(await pickups(engine, url, 3, n, listenPollMs)));
  const reconnects = linesStarting(logLines(worker), 'LISTEN causeway_wakeup: reconnecting');
  console.info(
    `[lost-listen] pickup ms: woken ${woken.join('/')}; NOTIFY lost ${lost.join('/')}; ` +
      `NOTIFY lost once idle ${polled.join('/')}; ${reconnects.length} reconnects (poll interval ${listenPollMs} ms)`,
  );
  expect(Math.max(...woken)).toBeLessThan(wokenMs);
  expect(Math.max(...lost, ...polled)).toBeLessThanOrEqual(listenPollMs + 1_000);
  expect(Math.min(...polled)).toBeGreaterThan(listenPollMs / 2);
  // One reconnect per lost connection (a failed attempt would add one more, never a spin).
  const lostConnections = options.cycles + options.terminations;
  expect(reconnects.length).toBeGreaterThanOrEqual(lostConnections);
  expect(reconnects.length).toBeLessThanOrEqual(2 * lostConnections);
  await waitFor(async () => (await unfinishedWorkflows(url)) === 0, { timeoutMs: 30_000 });
  expect(await logMismatches(url)).toEqual([]);
}
