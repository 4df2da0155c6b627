import { describe, expect, inject, it } from 'vitest';
import { useTestDatabase } from '../../helpers/database';
import { expectRecovered } from '../support/db-faults-expect';
import { terminateRepeatedly } from '../support/db-faults-killer';
import { longLoad, runUnderFault } from '../support/db-faults-scenario';

const database = useTestDatabase();

describe('backends terminated under load for a minute', () => {
  it('three workers and the API reconnect after every pg_terminate_backend of all their connections', async () => {
    let terminated = 0;
    const result = await runUnderFault({
      databaseUrl: database().url,
      ...longLoad,
      async fault(resumed) {
        const killed = await terminateRepeatedly({
          adminUrl: inject('adminDatabaseUrl'),
          databaseName: database().name,
          which: 'all',
          forMs: 60_000,
          everyMs: 700,
          resumed,
        });
        terminated = killed.terminated;
        return [killed.window];
      },
    });
    console.info(`[terminate-backend long] ${terminated} backends terminated`);
    expect(terminated).toBeGreaterThan(200);
    expectRecovered(result, { minFailureStreak: 1, leaseMs: longLoad.leaseMs });
  }, 600_000);
});
