import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../scripts/embedded-postgres';

declare module 'vitest' {
  interface ProvidedContext {
    /** Superuser connection URL; tests create their own databases through it. */
    adminDatabaseUrl: string;
  }
}

/**
 * Vitest global setup: runs once per `vitest run` in the main process.
 *
 * With DATABASE_URL set, that server is used as is. Otherwise one throwaway embedded
 * PostgreSQL is started in a fresh temp dir and stopped (and deleted) in teardown.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const externalUrl = process.env.DATABASE_URL;
  if (externalUrl !== undefined && externalUrl !== '') {
    project.provide('adminDatabaseUrl', externalUrl);
    return async () => {};
  }

  const server = await startEmbeddedPostgres({
    repoRoot: project.config.root,
    label: '[test]',
    echoLogs: process.env.CAUSEWAY_TEST_PG_LOG === '1',
  });
  project.provide('adminDatabaseUrl', server.url);
  return server.stop;
}
