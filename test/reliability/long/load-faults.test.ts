import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../../helpers/database';
import { runLoadFaults } from '../scenarios/load-faults';
import { scenarioSeed } from '../support/load-shapes';

const database = useTestDatabase();

// 115,000 workflows submitted while 6 worker processes run them, a random worker SIGKILLed
// and another SIGSTOPped every few seconds (RELIABILITY.md).
describe('load with random SIGKILL and SIGSTOP of worker processes (long)', () => {
  it('loses no workflow, runs no non-reentrant step twice, and drains once the faults stop', async () => {
    const result = await runLoadFaults(database().url, {
      oneStep: 100_000,
      threeStep: 10_000,
      waiting: 5_000,
      effectEvery: 20,
      workers: 6,
      concurrency: 10,
      leaseMs: 2_000,
      batch: 1_000,
      batchPauseMs: 100,
      maxBacklog: 4_000,
      killEveryMs: 4_000,
      pauseEveryMs: 4_000,
      pauseMs: [500, 5_000],
      faultTailMs: 2_000,
      livenessBoundMs: 120_000,
      seed: scenarioSeed(),
    });
    console.log(`load-faults (long): ${JSON.stringify(result)}`);
    expect(result.submitted).toBe(115_000);
    expect(result.eventsSent).toBe(5_000);
    expect(result.faults.kills).toBeGreaterThan(10);
    expect(result.faults.pausesOverLease).toBeGreaterThan(0);
  });
});
