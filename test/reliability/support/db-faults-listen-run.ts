import { setTimeout as sleep } from 'node:timers/promises';
import { expect, inject } from 'vitest';
import type { FixtureProcess } from '../../api/fixtures/processes';
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
/**
 * The poll interval of the worker that shows the wake-ups: no poll comes within a test, so
 * whatever it claims, a wake-up made it claim.
 */
const neverPollsMs = 600_000;
/** How long a woken pickup may take on a loaded machine: far less than `neverPollsMs`. */
const wokenTimeoutMs = 30_000;

/**
 * The lost-LISTEN scenario in two parts, each with its own worker process.
 *
 * Polling: `cycles` times, the worker's listener frozen (SIGSTOP: nothing is delivered, the
 * connection stays open), two submits claimed by the poll, then the frozen listener
 * terminated and a new one there.
 *
 * Wake-ups: a worker that never polls within the test claims submits while its listener is
 * there, again after each of `cycles` frozen listeners is terminated, and after each of
 * `terminations` plain pg_terminate_backend of the listener. How fast a wake-up is, is the
 * bench's to say (W3, `pnpm bench`); here it is only that one came.
 */
export async function expectPollingCoversLostListen(
  database: { readonly url: string; readonly name: string },
  options: { readonly cycles: number; readonly terminations: number },
): Promise<void> {
  const { url, name } = database;
  const adminUrl = inject('adminDatabaseUrl');
  const engine = testEngine(url, { workflows: [faultChain] });
  await engine.migrate();
  let n = 0;

  // Polling: a submit whose NOTIFY is lost is claimed all the same.
  const poller = startWorkerProcess(url, {
    load: 'chain',
    leaseMs: 5_000,
    pollMs: listenPollMs,
    concurrency: 4,
    sweeper: true,
  });
  await poller.ready(60_000);
  let gone: number[] = [];
  const lost: number[] = [];
  const polled: number[] = [];
  for (let cycle = 0; cycle < options.cycles; cycle++) {
    const [listener] = await awaitNewListeners(adminUrl, name, gone, 1);
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
  await waitFor(async () => (await unfinishedWorkflows(url)) === 0, { timeoutMs: 10_000 });
  const pollerReconnects = reconnectLines(poller);
  await poller.stop();
  // Its listener may linger a moment: the next worker's must be a new one all the same.
  gone = [...gone, ...(await listenBackends(adminUrl, name))];

  // Wake-ups: the same worker code, polling once in ten minutes.
  const woken = startWorkerProcess(url, {
    load: 'chain',
    leaseMs: 5_000,
    pollMs: neverPollsMs,
    concurrency: 4,
    sweeper: true,
  });
  await woken.ready(60_000);
  const wokenPickups = async () => {
    await pickups(engine, url, 3, n, wokenTimeoutMs);
    n += 3;
  };
  await awaitNewListeners(adminUrl, name, gone, 1);
  await wokenPickups();
  for (let cycle = 0; cycle < options.cycles; cycle++) {
    const frozen = await freezeListeners(adminUrl, name);
    expect(frozen).toHaveLength(1);
    await terminateFrozen(adminUrl, name, frozen);
    gone = [...gone, ...frozen];
    await awaitNewListeners(adminUrl, name, gone, 1);
    await wokenPickups();
  }
  for (let round = 0; round < options.terminations; round++) {
    gone = await listenBackends(adminUrl, name);
    await terminateBackends(adminUrl, name, 'listen');
    await awaitNewListeners(adminUrl, name, gone, 1);
  }
  await wokenPickups();
  const wokenReconnects = reconnectLines(woken);

  console.info(
    `[lost-listen] pickup ms: NOTIFY lost ${lost.join('/')}; NOTIFY lost once idle ` +
      `${polled.join('/')} (poll interval ${listenPollMs} ms); ${n} submits; reconnects: ` +
      `${pollerReconnects.length} polling, ${wokenReconnects.length} woken`,
  );
  expect(Math.max(...lost, ...polled)).toBeLessThanOrEqual(listenPollMs + 1_000);
  expect(Math.min(...polled)).toBeGreaterThan(listenPollMs / 2);
  // One reconnect per lost connection (a failed attempt would add one more, never a spin).
  expectReconnects(pollerReconnects.length, options.cycles);
  expectReconnects(wokenReconnects.length, options.cycles + options.terminations);
  await waitFor(async () => (await unfinishedWorkflows(url)) === 0, { timeoutMs: 30_000 });
  expect(await logMismatches(url)).toEqual([]);
}

function reconnectLines(worker: FixtureProcess) {
  return linesStarting(logLines(worker), 'LISTEN causeway_wakeup: reconnecting');
}

function expectReconnects(reconnects: number, lostConnections: number): void {
  expect(reconnects).toBeGreaterThanOrEqual(lostConnections);
  expect(reconnects).toBeLessThanOrEqual(2 * lostConnections);
}
