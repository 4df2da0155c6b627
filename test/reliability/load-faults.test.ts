import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { runLoadFaults } from './scenarios/load-faults';
import { scenarioSeed } from './support/load-shapes';

const database = useTestDatabase();

// The short version of long/load-faults.test.ts: the same scenario, a small load, a few faults.
describe('load with random SIGKILL and SIGSTOP of worker processes (short)', () => {
  it('loses no workflow, runs no non-reentrant step twice, and drains once the faults stop', async () => {
    const result = await runLoadFaults(database().url, {
      oneStep: 1_000,
      threeStep: 300,
      waiting: 200,
      effectEvery: 10,
      workers: 3,
      concurrency: 8,
      leaseMs: 2_000,
      batch: 100,
      batchPauseMs: 300,
      maxBacklog: 400,
      killEveryMs: 2_500,
      pauseEveryMs: 2_500,
      pauseMs: [500, 3_500],
      faultTailMs: 1_000,
      livenessBoundMs: 30_000,
      seed: scenarioSeed(),
    });
    console.log(`load-faults (short): ${JSON.stringify(result)}`);
    expect(result.submitted).toBe(1_500);
    expect(result.eventsSent).toBe(200);
    expect(result.faults.kills).toBeGreaterThan(0);
    expect(result.faults.pauses).toBeGreaterThan(0);
  }, 180_000);
});
