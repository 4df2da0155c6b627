import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../../helpers/database';
import { runSubscriptionsLoad } from '../scenarios/subscriptions-load';
import { longSideLoad, scenarioSeed } from '../support/load-shapes';

const database = useTestDatabase();

// 20 watchers and 10 reconnecting watchers beside 20,000 workflows on 6 worker processes, one
// killed every few seconds (RELIABILITY.md).
describe('transition subscriptions under load (long)', () => {
  it('deliver every transition of a workflow in order, across a reconnect with `after`', async () => {
    const result = await runSubscriptionsLoad(database().url, {
      ...longSideLoad,
      watched: 20,
      resumed: 10,
      killEveryMs: 4_000,
      watchTimeoutMs: 120_000,
      livenessBoundMs: 120_000,
      seed: scenarioSeed(),
    });
    console.log(`subscriptions-load (long): ${JSON.stringify(result)}`);
    expect(result).toMatchObject({ watched: 20, resumed: 10, submitted: 20_000 });
    expect(result.rowsAfterResume).toBeGreaterThan(0);
  });
});
