import { afterAll, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { morningDigest, tickWorkflow } from './fixtures/schedules';
import { dayMs, untilSucceeded } from './retention-support';

/**
 * Retention beside schedules: a schedule's last workflow, once purged, reads as gone (null)
 * while the schedule and its operators' history stay, and the schedule goes on submitting.
 */
const database = useTestDatabase();
const url = () => database().url;
const engine = () =>
  testEngine(url(), { workflows: [tickWorkflow], schedules: [morningDigest], sweepIntervalMs: 50 });
const operator = { operator: 'ops', reason: 'retention beside schedules' };

afterAll(async () => {
  await setDatabaseClockOffset(url(), 0);
});

it('keeps a schedule and its history when its last workflow is purged, and it goes on', async () => {
  const cw = engine();
  await cw.migrate();
  const worker = await cw.startWorker({
    queues: ['q-schedules'],
    concurrency: 2,
    scheduler: false,
  });
  const first = await cw.triggerSchedule(morningDigest.name, operator);
  await untilSucceeded(url(), [first.workflow.id]);
  await worker.stop();

  await setDatabaseClockOffset(url(), 40 * dayMs);
  const answer = await cw.purgeFinished({ ...operator, olderThanMs: 30 * dayMs });
  expect(answer.workflowsRemoved).toBe(1);
  const [view] = await cw.schedules();
  expect(view?.lastWorkflow).toBeNull();
  expect(view?.history.map((event) => [event.kind, event.workflowId])).toEqual([
    ['triggered', first.workflow.id],
  ]);

  const again = await cw.startWorker({ queues: ['q-schedules'], concurrency: 2, scheduler: false });
  const second = await cw.triggerSchedule(morningDigest.name, operator);
  await untilSucceeded(url(), [second.workflow.id]);
  await again.stop();
  expect((await cw.schedules())[0]?.lastWorkflow).toEqual({
    id: second.workflow.id,
    state: 'succeeded',
  });
  expect(await logMismatches(url())).toEqual([]);
});
