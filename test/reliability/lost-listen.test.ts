import { describe, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { expectPollingCoversLostListen } from './support/db-faults-listen-run';

const database = useTestDatabase();

// The long version: long/lost-listen.test.ts.
describe('lost notifications', () => {
  it('a submit whose NOTIFY is lost is claimed by polling; the listener reconnects and wakes again', async () => {
    await expectPollingCoversLostListen(database(), { cycles: 1, terminations: 5 });
  }, 120_000);
});
