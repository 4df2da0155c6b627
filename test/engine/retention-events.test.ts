import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import {
  approval,
  dayMs,
  partitionsOf,
  relay,
  submitOnDay,
  untilSucceeded,
} from './retention-support';

/**
 * R59: a retention run removes the deliveries of the workflows it removes, and the events no
 * kept workflow needs: received before the cutoff, before every kept workflow was accepted (a
 * wait takes only events received after its workflow was accepted, R37), and received by no
 * kept workflow. An event a kept workflow received, or one a kept workflow could still take,
 * stays; and nothing goes before the window has passed.
 */
const database = useTestDatabase();
const url = () => database().url;
const engine = () => testEngine(url(), { workflows: [approval, relay], sweepIntervalMs: 50 });
const request = { operator: 'ops@example', reason: 'keep 30 days' };
const ids: Record<string, string> = {};
const events: Record<string, string> = {};

async function storedEvents(): Promise<string[]> {
  const rows = await query<{ id: string }>(url(), 'select id::text from causeway_events');
  return rows.map((row) => row.id).sort();
}

async function storedDeliveries(): Promise<{ event: string; workflow: string }[]> {
  return query(
    url(),
    `select event_id::text as event, workflow_id::text as workflow
       from causeway_event_deliveries order by delivered_at`,
  );
}

beforeAll(async () => {
  const cw = engine();
  await cw.migrate();
  const worker = await cw.startWorker({ queues: ['q-retention'], concurrency: 2 });
  // Day 0 of database time: an event nobody waits for, and a workflow on day +2 that takes
  // its own event and finishes.
  events.orphan = (await cw.sendEvent('retention.approved', 'nobody', {})).eventId;
  ids.done = await submitOnDay(cw, 2, approval.name, { key: 'done' });
  events.done = (await cw.sendEvent('retention.approved', 'done', {})).eventId;
  // Day 1: on day +3, one workflow that takes its event and finishes, and one whose wait
  // starts only after a first step nobody runs yet; then the event that one will take.
  await setDatabaseClockOffset(url(), dayMs);
  ids.relay = await submitOnDay(cw, 3, relay.name, { key: 'late' });
  ids.kept = await submitOnDay(cw, 3, approval.name, { key: 'kept' });
  events.kept = (await cw.sendEvent('retention.approved', 'kept', {})).eventId;
  events.late = (await cw.sendEvent('retention.approved', 'late', {})).eventId;
  await untilSucceeded(url(), [ids.done, ids.kept] as string[]);
  await worker.stop();
  await cw.close();
  // Forty days on: a 30-day window's cutoff is day +10.
  await setDatabaseClockOffset(url(), 40 * dayMs);
}, 60_000);

afterAll(async () => {
  await setDatabaseClockOffset(url(), 0);
});

describe('retention of events and deliveries', () => {
  it('starts with every event stored and the two deliveries', async () => {
    expect(await storedEvents()).toEqual(Object.values(events).sort());
    expect(await storedDeliveries()).toEqual([
      { event: events.done, workflow: ids.done },
      { event: events.kept, workflow: ids.kept },
    ]);
  });

  it('keeps every event and delivery while the window has not passed', async () => {
    const cw = engine();
    // Cutoff: day -5, before every event was received and every workflow finished.
    const answer = await cw.purgeFinished({ ...request, olderThanMs: 45 * dayMs });
    expect(answer).toMatchObject({ workflowsRemoved: 0, eventsRemoved: 0, deliveriesRemoved: 0 });
    expect(await storedEvents()).toEqual(Object.values(events).sort());
    expect(await storedDeliveries()).toHaveLength(2);
  });

  it('still refuses any other delete, update or truncate of events and deliveries', async () => {
    for (const statement of [
      'delete from causeway_events',
      'update causeway_events set reason = reason',
      'truncate causeway_events',
      'delete from causeway_event_deliveries',
      'truncate causeway_event_deliveries',
    ]) {
      await expect(query(url(), statement), statement).rejects.toThrow(/append-only/);
    }
    expect(await storedEvents()).toHaveLength(4);
  });

  it('removes the deliveries of removed workflows and the events no kept workflow needs', async () => {
    const cw = engine();
    const dry = await cw.purgeFinished({ ...request, olderThanMs: 30 * dayMs, dryRun: true });
    expect(dry).toMatchObject({ eventsRemoved: null, deliveriesRemoved: null });
    expect(await storedEvents()).toHaveLength(4);

    const donePartition = (await partitionsOf(url(), [ids.done as string])).get(ids.done as string);
    const answer = await cw.purgeFinished({ ...request, olderThanMs: 30 * dayMs, batchSize: 1 });
    expect(answer.partitionsDropped.filter((p) => p.workflows > 0).map((p) => p.name)).toEqual([
      donePartition,
    ]);
    expect(answer).toMatchObject({ workflowsRemoved: 1, eventsRemoved: 2, deliveriesRemoved: 1 });
    // The orphan was received before every kept workflow was accepted; the done one's only
    // delivery went with its workflow. The kept workflow's event and the relay's stay.
    expect(await storedEvents()).toEqual([events.kept, events.late].sort());
    expect(await storedDeliveries()).toEqual([{ event: events.kept, workflow: ids.kept }]);
    expect(await logMismatches(url())).toEqual([]);
    const [run] = await cw.retentionRuns({ limit: 1 });
    expect(run).toMatchObject({ id: answer.runId, eventsRemoved: 2, deliveriesRemoved: 1 });

    const again = await cw.purgeFinished({ ...request, olderThanMs: 30 * dayMs });
    expect(again).toMatchObject({ workflowsRemoved: 0, eventsRemoved: 0, deliveriesRemoved: 0 });
  });

  it('lets a kept workflow whose wait starts later take the event it was kept for', async () => {
    const cw = engine();
    const worker = await cw.startWorker({
      queues: ['q-retention', 'q-retention-late'],
      concurrency: 2,
    });
    await waitFor(async () => (await storedDeliveries()).length === 2);
    await untilSucceeded(url(), [ids.relay as string]);
    await worker.stop();
    expect(await storedDeliveries()).toEqual([
      { event: events.kept, workflow: ids.kept },
      { event: events.late, workflow: ids.relay },
    ]);
    expect(await logMismatches(url())).toEqual([]);
  });
});
