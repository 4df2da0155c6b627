import { readFileSync } from 'node:fs';
import type { Engine } from '@causeway/engine';
import { query } from '../../helpers/engine';
import { waitFor } from '../../helpers/wait-for';
import { listenBackends, terminateBackends, unfinishedWorkflows } from './db-faults-checks';

/**
 * The lost-notification fault: the LISTEN backends of a database are frozen (SIGSTOP: the
 * connection stays open, nothing is delivered, as with a hung listener), then terminated,
 * and the pickup latency of submits measured on the database clock.
 */

/** Submits one fault-chain workflow; resolves with how long its first step waited for a claim. */
export async function pickupLatencyMs(
  engine: Engine,
  databaseUrl: string,
  n: number,
  timeoutMs: number,
): Promise<number> {
  const { workflow } = await engine.submit('fault-chain', { n, stepMs: 1 });
  return waitFor(
    async () => {
      const [row] = await query<{ ms: number | null }>(
        databaseUrl,
        `select (extract(epoch from (
                  min(t.at) filter (where t.reason = 'lease_acquired')
                - min(t.at) filter (where t.reason = 'submitted'))) * 1000)::int as ms
           from causeway_transitions t
          where t.workflow_id = $1 and t.step = 'first'`,
        [workflow.id],
      );
      return row?.ms ?? undefined;
    },
    { timeoutMs, intervalMs: 20, description: `workflow ${n} claimed` },
  );
}

/** A backend is stopped (SIGSTOP) when its /proc state is `T`. */
export function isStopped(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
}

/**
 * Freezes the LISTEN backends of the database (the server must run on this machine, and
 * this process may signal it: root or its user). Returns their pids.
 */
export async function freezeListeners(adminUrl: string, databaseName: string): Promise<number[]> {
  const pids = await listenBackends(adminUrl, databaseName);
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  return pids;
}

/** Terminates frozen LISTEN backends (the signal is taken once they run again). */
export async function terminateFrozen(
  adminUrl: string,
  databaseName: string,
  pids: readonly number[],
): Promise<void> {
  await terminateBackends(adminUrl, databaseName, 'listen');
  for (const pid of pids) process.kill(pid, 'SIGCONT');
}

/** Waits until `count` LISTEN backends are there again, none of them one of `gone`. */
export async function awaitNewListeners(
  adminUrl: string,
  databaseName: string,
  gone: readonly number[],
  count: number,
): Promise<number[]> {
  return waitFor(
    async () => {
      const pids = await listenBackends(adminUrl, databaseName);
      const fresh = pids.filter((pid) => !gone.includes(pid));
      return fresh.length >= count && fresh.length === pids.length ? fresh : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 20, description: 'the listener reconnected' },
  );
}

/**
 * Several pickups, each submitted once every workflow before it finished: the worker is idle,
 * so no step of its own finishing makes it look again, and only a wake-up or a poll claims it.
 */
export async function pickups(
  engine: Engine,
  databaseUrl: string,
  count: number,
  first: number,
  timeoutMs: number,
): Promise<number[]> {
  const latencies: number[] = [];
  for (let index = 0; index < count; index++) {
    await waitFor(async () => (await unfinishedWorkflows(databaseUrl)) === 0, {
      timeoutMs,
      description: 'the workflows before it finished',
    });
    latencies.push(await pickupLatencyMs(engine, databaseUrl, first + index, timeoutMs));
  }
  return latencies;
}
