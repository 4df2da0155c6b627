import { fileURLToPath } from 'node:url';
import { type EmbeddedServer, startEmbeddedPostgres } from '../../../scripts/embedded-postgres';
import { query } from '../../helpers/engine';

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
