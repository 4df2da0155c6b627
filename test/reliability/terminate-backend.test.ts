import { describe, expect, inject, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { expectRecovered } from './support/db-faults-expect';
import { terminateRepeatedly } from './support/db-faults-killer';
import { runUnderFault, shortLoad } from './support/db-faults-scenario';

const database = useTestDatabase();

// The long version: long/terminate-backend.test.ts.
describe('backends terminated under load', () => {
  it('workers and the API reconnect after pg_terminate_backend of all their connections, again and again', async () => {
    let terminated = 0;
    const result = await runUnderFault({
      databaseUrl: database().url,
      ...shortLoad,
      async fault(resumed) {
        const killed = await terminateRepeatedly({
          adminUrl: inject('adminDatabaseUrl'),
          databaseName: database().name,
          which: 'all',
          forMs: 4_000,
          everyMs: 500,
          resumed,
        });
        terminated = killed.terminated;
        return [killed.window];
      },
    });
    console.info(`[terminate-backend] ${terminated} backends terminated`);
    expect(terminated).toBeGreaterThan(10);
    expectRecovered(result, { minFailureStreak: 1, leaseMs: shortLoad.leaseMs });
    // Every process lost its LISTEN connection and took it up again.
    for (const report of result.processes) {
      expect(
        report.waits.some((wait) => wait.msg.startsWith('LISTEN')),
        report.name,
      ).toBe(true);
    }
  }, 120_000);
});
