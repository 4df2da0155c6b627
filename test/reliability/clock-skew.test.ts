import { describe, it } from 'vitest';
import { libfaketime, requireTestProgram } from '../../scripts/test-programs';
import { useTestDatabase } from '../helpers/database';
import { testEngine } from '../helpers/engine';
import { expectSkewIdentical, runSkewScenario } from './support/db-faults-skew-run';
import { allFaultWorkflows } from './support/db-faults-workflows';

const database = useTestDatabase();

// The long version: long/clock-skew.test.ts.
describe('worker clocks hours off', () => {
  it('workers 5 h ahead and 5 h behind (libfaketime) behave as one on time: every timing is on the database clock', async () => {
    requireTestProgram(libfaketime);
    const { url } = database();
    const engine = testEngine(url, { workflows: allFaultWorkflows });
    await engine.migrate();
    expectSkewIdentical(await runSkewScenario(engine, url, 1));
  }, 120_000);
});
