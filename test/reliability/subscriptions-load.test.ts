import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { runSubscriptionsLoad } from './scenarios/subscriptions-load';
import { scenarioSeed, shortSideLoad } from './support/load-shapes';

const database = useTestDatabase();

// The short version of long/subscriptions-load.test.ts.
describe('transition subscriptions under load (short)', () => {
  it('deliver every transition of a workflow in order, across a reconnect with `after`', async () => {
    const result = await runSubscriptionsLoad(database().url, {
      ...shortSideLoad,
      watched: 3,
      resumed: 2,
      killEveryMs: 3_000,
      watchTimeoutMs: 30_000,
      livenessBoundMs: 30_000,
      seed: scenarioSeed(),
    });
    console.log(`subscriptions-load (short): ${JSON.stringify(result)}`);
    expect(result).toMatchObject({ watched: 3, resumed: 2 });
    expect(result.rowsAfterResume).toBeGreaterThan(0);
  }, 180_000);
});
