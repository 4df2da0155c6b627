import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../../helpers/database';
import { runBadInputLoad } from '../scenarios/bad-input-load';
import { longSideLoad, scenarioSeed } from '../support/load-shapes';

const database = useTestDatabase();

// 5,000 bad HTTP requests and 3,000 bad engine calls beside 20,000 workflows on 6 worker
// processes (RELIABILITY.md).
describe('bad input under load (long)', () => {
  it('answers every bad request below 500 with a stable code and leaves parked work untouched', async () => {
    const result = await runBadInputLoad(database().url, {
      ...longSideLoad,
      parked: 200,
      httpRequests: 5_000,
      engineCalls: 3_000,
      livenessBoundMs: 120_000,
      seed: scenarioSeed(),
    });
    console.log(`bad-input-load (long): ${JSON.stringify(result)}`);
    expect(result.submitted).toBe(20_000);
    expect(result.codes.BAD_USER_INPUT).toBeGreaterThan(0);
  });
});
