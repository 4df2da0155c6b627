import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '../../../scripts/embedded-postgres';
import { expectRecovered } from '../support/db-faults-expect';
import { longLoad, runUnderFault } from '../support/db-faults-scenario';
import { restartRepeatedly, startRestartableServer } from '../support/db-faults-server';

// Its own embedded server, whatever DATABASE_URL says: the scenario stops and starts it.
let server: EmbeddedServer;
let databaseUrl: string;
beforeAll(async () => {
  ({ server, databaseUrl } = await startRestartableServer('[pg-restart long]'));
}, 120_000);
afterAll(() => server?.stop());

describe('PostgreSQL restarted under load, four times', () => {
  it('three workers and the API ride through stops of 2, 8, 4 and 12 s', async () => {
    const result = await runUnderFault({
      databaseUrl,
      ...longLoad,
      holds: 2,
      fault: (resumed) => restartRepeatedly(server, [2_000, 8_000, 4_000, 12_000], 10_000, resumed),
    });
    expectRecovered(result, {
      minFailureStreak: 5,
      leaseMs: longLoad.leaseMs,
      minUnconfirmedAborts: 2,
    });
    expect(result.answers['503 DATABASE_UNAVAILABLE']).toBeGreaterThan(0);
  }, 600_000);
});
