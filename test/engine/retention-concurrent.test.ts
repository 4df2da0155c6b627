import { afterAll, beforeAll, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import {
  dayMs,
  note,
  partitionsOf,
  retentionWorkflows,
  submitOnDay,
  untilSucceeded,
} from './retention-support';

/**
 * Two engines purge the same database at once: each workflow is removed once, each partition
 * dropped by one of them, neither fails, and what remains is sound (R25).
 */
const database = useTestDatabase();
const url = () => database().url;
const engine = () => testEngine(url(), { workflows: retentionWorkflows, sweepIntervalMs: 50 });
const perDay = 30;
const days = [1, 2, 3];
const submitted: string[] = [];

beforeAll(async () => {
  const cw = engine();
  await cw.migrate();
  const worker = await cw.startWorker({ queues: ['q-retention'], concurrency: 8 });
  for (const day of days) {
    for (let n = 0; n < perDay; n += 1)
      submitted.push(await submitOnDay(cw, day, note.name, { n }));
  }
  await untilSucceeded(url(), submitted, 30_000);
  await worker.stop();
  await cw.close();
  await setDatabaseClockOffset(url(), 40 * dayMs);
}, 60_000);

afterAll(async () => {
  await setDatabaseClockOffset(url(), 0);
});

it('removes each workflow once when two engines purge at the same time', async () => {
  const partitions = new Set((await partitionsOf(url(), submitted)).values());
  expect(partitions.size).toBe(days.length);
  const request = { olderThanMs: 30 * dayMs, operator: 'ops', reason: 'overlap', batchSize: 7 };
  const [first, second] = await Promise.all([
    engine().purgeFinished(request),
    engine().purgeFinished(request),
  ]);
  expect((first?.workflowsRemoved ?? 0) + (second?.workflowsRemoved ?? 0)).toBe(submitted.length);
  const dropped = [...(first?.partitionsDropped ?? []), ...(second?.partitionsDropped ?? [])].map(
    (partition) => partition.name,
  );
  for (const name of partitions) expect(dropped.filter((each) => each === name)).toEqual([name]);
  expect(await query(url(), 'select id from causeway_workflows')).toEqual([]);
  expect(await query(url(), 'select id from causeway_tasks')).toEqual([]);
  expect(
    await query(url(), 'select 1 from causeway_transitions where workflow_id = any($1::uuid[])', [
      submitted,
    ]),
  ).toEqual([]);
  expect(await logMismatches(url())).toEqual([]);
  const runs = await query<{ operator: string }>(
    url(),
    'select operator from causeway_retention_runs',
  );
  expect(runs).toHaveLength(2);
});
