import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { dayMs, doomed, note, partitionsOf, submitOnDay } from './retention-support';

/**
 * R59: a `dead` workflow whose later steps stay `pending` can no longer move (nothing runs a
 * pending step of a finished workflow), so it does not hold its day's log partition: it is
 * removed once it finished longer ago than the window, never earlier, and the run never calls
 * it live.
 */
const database = useTestDatabase();
const url = () => database().url;
const engine = () => testEngine(url(), { workflows: [note, doomed], sweepIntervalMs: 50 });
const request = { operator: 'ops@example', reason: 'keep 30 days' };
let deadId = '';
let partition = '';
let replayedId = '';
let replayedPartition = '';

async function taskStates(workflowId: string): Promise<Record<string, string>> {
  const rows = await query<{ step: string; state: string }>(
    url(),
    'select step, state from causeway_tasks where workflow_id = $1',
    [workflowId],
  );
  return Object.fromEntries(rows.map((row) => [row.step, row.state]));
}

beforeAll(async () => {
  const cw = engine();
  await cw.migrate();
  // Made on day +2 (its own partition); it dies on day +40 of database time.
  deadId = await submitOnDay(cw, 2, doomed.name, { n: 1 });
  // Another on day +3, which an operator will replay.
  replayedId = await submitOnDay(cw, 3, doomed.name, { n: 2 });
  const partitions = await partitionsOf(url(), [deadId, replayedId]);
  partition = partitions.get(deadId) as string;
  replayedPartition = partitions.get(replayedId) as string;
  await setDatabaseClockOffset(url(), 40 * dayMs);
  const worker = await cw.startWorker({ queues: ['q-retention'], concurrency: 2 });
  await waitFor(async () => (await taskStates(deadId)).refuse === 'dead');
  await waitFor(async () => (await taskStates(replayedId)).refuse === 'dead');
  await worker.stop();
  await cw.close();
}, 60_000);

afterAll(async () => {
  await setDatabaseClockOffset(url(), 0);
});

describe('a dead workflow with pending steps', () => {
  it('is dead with its later step pending, in a partition of its own', async () => {
    expect(await taskStates(deadId)).toEqual({ refuse: 'dead', after: 'pending' });
    const [row] = await query<{ state: string }>(
      url(),
      'select state from causeway_workflows where id = $1',
      [deadId],
    );
    expect(row?.state).toBe('dead');
    expect(partition).toMatch(/^causeway_transitions_\d{8}$/);
    expect(replayedPartition).not.toBe(partition);
  });

  it('is kept while it finished inside the window, held as finished after the cutoff', async () => {
    const cw = engine();
    // Cutoff: day +10, after its partition's day, before it died (day +40).
    const answer = await cw.purgeFinished({ ...request, olderThanMs: 30 * dayMs });
    expect(answer.workflowsRemoved).toBe(0);
    const held = answer.partitionsHeld.find((p) => p.name === partition);
    expect(held).toMatchObject({ liveWorkflows: 0, youngWorkflows: 1, youngSample: [deadId] });
    expect(held?.message).toBe(
      `partition ${partition} held by 1 workflows finished after the cutoff: ${deadId}`,
    );
    expect(held?.message).not.toContain('live');
    expect(await taskStates(deadId)).toEqual({ refuse: 'dead', after: 'pending' });
  });

  it('is removed with its partition once it finished longer ago than the window', async () => {
    const cw = engine();
    await setDatabaseClockOffset(url(), 75 * dayMs);
    // Replayed (no worker runs it now): its dead task is queued again, so it can move.
    const [refuse] = await query<{ id: string }>(
      url(),
      "select id::text from causeway_tasks where workflow_id = $1 and step = 'refuse'",
      [replayedId],
    );
    await cw.replayTask(refuse?.id as string, { operator: 'ops@example', reason: 'try again' });
    const dry = await cw.purgeFinished({ ...request, olderThanMs: 30 * dayMs, dryRun: true });
    expect(dry.partitionsDropped.map((p) => p.name)).toContain(partition);
    expect(dry.partitionsHeld.map((p) => p.name)).not.toContain(partition);

    const answer = await cw.purgeFinished({ ...request, olderThanMs: 30 * dayMs });
    expect(answer.partitionsHeld.map((p) => p.message).join('\n')).not.toContain(deadId);
    expect(answer.partitionsDropped).toContainEqual(
      expect.objectContaining({ name: partition, workflows: 1, tasks: 2 }),
    );
    expect(await query(url(), 'select id from causeway_workflows where id = $1', [deadId])).toEqual(
      [],
    );
    expect(await taskStates(deadId)).toEqual({});
    expect(await query(url(), 'select to_regclass($1) as t', [partition])).toEqual([{ t: null }]);
    const replayed = answer.partitionsHeld.find((p) => p.name === replayedPartition);
    expect(replayed).toMatchObject({ liveWorkflows: 1, liveSample: [replayedId] });
    expect(await taskStates(replayedId)).toEqual({ refuse: 'queued', after: 'pending' });
    expect(await logMismatches(url())).toEqual([]);
  });
});
