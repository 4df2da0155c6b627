import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type EmbeddedServer, startEmbeddedPostgres } from '../../../scripts/embedded-postgres';
import { query } from '../../helpers/engine';
import type { FaultWindow } from './db-faults-scenario';

/**
 * A PostgreSQL of the restart scenario's own: an embedded server (whatever DATABASE_URL
 * says, since the scenario stops and starts it, which it must not do to a shared server)
 * in a throwaway directory, restartable on the same port with the same data (`halt`,
 * `resume`). Runs the embedded-postgres package's version (18), also on a PG15 test run.
 */
export async function startRestartableServer(
  label: string,
): Promise<{ server: EmbeddedServer; databaseUrl: string }> {
  const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
  const server = await startEmbeddedPostgres({ repoRoot, label });
  await query(server.url, 'create database faults');
  const url = new URL(server.url);
  url.pathname = '/faults';
  return { server, databaseUrl: url.toString() };
}

/**
 * Stops the server for each of `downMs` in turn (the load keeps running against it), with
 * `upMs` of normal work between; each window measured with `resumed` once it is back.
 */
export async function restartRepeatedly(
  server: EmbeddedServer,
  downMs: readonly number[],
  upMs: number,
  resumed: () => Promise<number>,
): Promise<FaultWindow[]> {
  const windows: FaultWindow[] = [];
  for (const [index, down] of downMs.entries()) {
    if (index > 0) await sleep(upMs);
    const startedAt = performance.now();
    await server.halt();
    await sleep(down);
    await server.resume();
    const backAt = performance.now();
    windows.push({ startedAt, backAt, resumeMs: await resumed() });
  }
  return windows;
}
