import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '../../scripts/embedded-postgres';
import { expectRecovered } from './support/db-faults-expect';
import { runUnderFault, shortLoad } from './support/db-faults-scenario';
import { restartRepeatedly, startRestartableServer } from './support/db-faults-server';

// The scenario stops and starts PostgreSQL, so it runs on an embedded server of its own,
// whatever DATABASE_URL says (the long version: long/pg-restart.test.ts).
let server: EmbeddedServer;
let databaseUrl: string;
beforeAll(async () => {
  ({ server, databaseUrl } = await startRestartableServer('[pg-restart]'));
}, 120_000);
afterAll(() => server?.stop());

describe('PostgreSQL restarted under load', () => {
  it('workers and the API ride through a 3 s stop: they back off, resume, and lose nothing', async () => {
    const result = await runUnderFault({
      databaseUrl,
      ...shortLoad,
      holds: 1,
      fault: (resumed) => restartRepeatedly(server, [3_000], 0, resumed),
    });
    expectRecovered(result, {
      minFailureStreak: 3,
      leaseMs: shortLoad.leaseMs,
      minUnconfirmedAborts: 1,
    });
    // A stop cuts every connection: the API said so instead of failing.
    expect(result.answers['503 DATABASE_UNAVAILABLE']).toBeGreaterThan(0);
  }, 120_000);
});
