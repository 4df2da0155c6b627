import { describe, it } from 'vitest';
import { useTestDatabase } from '../../helpers/database';
import { expectPollingCoversLostListen } from '../support/db-faults-listen-run';

const database = useTestDatabase();

describe('lost notifications, again and again', () => {
  it('every submit whose NOTIFY is lost is claimed by polling; the listener comes back every time', async () => {
    await expectPollingCoversLostListen(database(), { cycles: 6, terminations: 30 });
  }, 300_000);
});
