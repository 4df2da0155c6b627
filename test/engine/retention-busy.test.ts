import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
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
 * A partition drop never waits long for the log's lock (every log insert would queue behind
 * it): with a reader holding the log open, the run reports the partition busy and keeps it; the
 * next run drops it.
 */
const database = useTestDatabase();
const url = () => database().url;
const request = { olderThanMs: 30 * dayMs, operator: 'ops', reason: 'busy log' };

afterAll(async () => {
  await setDatabaseClockOffset(url(), 0);
});

it('reports a partition busy while a reader holds the log, and drops it on the next run', async () => {
  const cw = testEngine(url(), { workflows: retentionWorkflows, sweepIntervalMs: 50 });
  await cw.migrate();
  const worker = await cw.startWorker({ queues: ['q-retention'], concurrency: 2 });
  const ids = [
    await submitOnDay(cw, 2, note.name, { n: 1 }),
    await submitOnDay(cw, 2, note.name, { n: 2 }),
  ];
  await untilSucceeded(url(), ids);
  await worker.stop();
  const partition = (await partitionsOf(url(), ids)).get(ids[0] as string) as string;
  await setDatabaseClockOffset(url(), 40 * dayMs);

  const reader = new pg.Client({ connectionString: url() });
  await reader.connect();
  try {
    await reader.query('begin');
    await reader.query('select count(*) from causeway_transitions');
    const blocked = await cw.purgeFinished(request);
    const held = blocked.partitionsHeld.find((each) => each.name === partition);
    expect(held).toMatchObject({ busy: true, liveWorkflows: 0, youngWorkflows: 0 });
    expect(held?.message).toContain('busy');
    expect(blocked.partitionsDropped.map((each) => each.name)).not.toContain(partition);
    await reader.query('commit');
  } finally {
    await reader.end();
  }

  const next = await cw.purgeFinished(request);
  expect(next.partitionsDropped.map((each) => each.name)).toContain(partition);
  expect(await query(url(), 'select to_regclass($1) as t', [partition])).toEqual([{ t: null }]);
  expect(await logMismatches(url())).toEqual([]);
});
