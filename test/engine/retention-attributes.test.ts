import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { attributeTerms } from './attribute-support';
import { approval, dayMs, note, submitOnDay, untilSucceeded } from './retention-support';

/**
 * R55 with retention: a finished workflow's attribute rows go with it, in the batch that
 * deletes it; a live workflow's (another day, so another log partition) stay with it.
 */
const database = useTestDatabase();
const url = () => database().url;
const engine = () => testEngine(url(), { workflows: [note, approval], sweepIntervalMs: 50 });
const request = { operator: 'ops@example', reason: 'keep 30 days' };
let doneId = '';
let liveId = '';
const attributes = { tenant: 'acme', tier: 2 };

const termsOf = (workflowId: string) => attributeTerms(url(), workflowId);

beforeAll(async () => {
  const cw = engine();
  await cw.migrate();
  const worker = await cw.startWorker({ queues: ['q-retention'], concurrency: 2 });
  doneId = await submitOnDay(cw, 2, note.name, { n: 1 }, { attributes });
  liveId = await submitOnDay(cw, 3, approval.name, { key: 'kept' }, { attributes });
  await untilSucceeded(url(), [doneId]);
  await worker.stop();
  await setDatabaseClockOffset(url(), 40 * dayMs);
  await cw.close();
}, 60_000);

afterAll(async () => {
  await setDatabaseClockOffset(url(), 0);
});

describe('retention and attributes', () => {
  it("deletes a finished workflow's attribute rows with it and keeps a live one's", async () => {
    expect(await termsOf(doneId)).toEqual(['tenant="acme"', 'tier=2']);
    expect(await termsOf(liveId)).toEqual(['tenant="acme"', 'tier=2']);
    const cw = engine();
    const answer = await cw.purgeFinished({ ...request, olderThanMs: 30 * dayMs });
    expect(answer.workflowsRemoved).toBe(1);
    expect(await query(url(), 'select id from causeway_workflows where id = $1', [doneId])).toEqual(
      [],
    );
    expect(await termsOf(doneId)).toEqual([]);
    expect(await termsOf(liveId)).toEqual(['tenant="acme"', 'tier=2']);
    const [orphans] = await query<{ n: number }>(
      url(),
      `select count(*)::int as n from causeway_workflow_attributes a
        where not exists (select 1 from causeway_workflows w where w.id = a.workflow_id)`,
    );
    expect(orphans?.n).toBe(0);
    const found = await cw.getWorkflow(liveId);
    expect(found?.attributes).toEqual({ tenant: 'acme', tier: 2 });
    expect(await logMismatches(url())).toEqual([]);
  });
});
