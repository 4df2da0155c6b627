import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { runBadInputLoad } from './scenarios/bad-input-load';
import { scenarioSeed, shortSideLoad } from './support/load-shapes';

const database = useTestDatabase();

// The short version of long/bad-input-load.test.ts.
describe('bad input under load (short)', () => {
  it('answers every bad request below 500 with a stable code and leaves parked work untouched', async () => {
    const result = await runBadInputLoad(database().url, {
      ...shortSideLoad,
      parked: 20,
      httpRequests: 200,
      engineCalls: 100,
      livenessBoundMs: 30_000,
      seed: scenarioSeed(),
    });
    console.log(`bad-input-load (short): ${JSON.stringify(result)}`);
    expect(result.codes.BAD_USER_INPUT).toBeGreaterThan(0);
    expect(result.codes.GRAPHQL_VALIDATION_FAILED).toBeGreaterThan(0);
  }, 180_000);
});
