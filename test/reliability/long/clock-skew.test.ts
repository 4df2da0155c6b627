import { describe, it } from 'vitest';
import { useTestDatabase } from '../../helpers/database';
import { testEngine } from '../../helpers/engine';
import { expectSkewIdentical, runSkewScenario } from '../support/db-faults-skew-run';
import { allFaultWorkflows } from '../support/db-faults-workflows';

const database = useTestDatabase();

describe('worker clocks hours off, many workflows', () => {
  it('workers 5 h ahead and 5 h behind run 8 workflows each as the one on time does', async () => {
    const { url } = database();
    const engine = testEngine(url, { workflows: allFaultWorkflows });
    await engine.migrate();
    expectSkewIdentical(await runSkewScenario(engine, url, 8));
  }, 300_000);
});
