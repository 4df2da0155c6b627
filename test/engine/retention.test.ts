import { createReadModel, type Engine, EngineError } from '@causeway/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import {
  approval,
  dayMs,
  note,
  parentMismatches,
  partitionsOf,
  retentionWorkflows,
  storedCounts,
  submitOnDay,
  untilSucceeded,
} from './retention-support';

/**
 * Retention (docs/retention.md) on real engines: finished, live and too-young workflows in the
 * same log partition and in separate ones; a purge drops only the partitions whose every
 * workflow finished long enough ago, says what holds the others, and leaves everything else
 * sound (R25) and running.
 */
const database = useTestDatabase();
const url = () => database().url;
const engine = () => testEngine(url(), { workflows: retentionWorkflows, sweepIntervalMs: 50 });
const request = { operator: 'ops@example', reason: 'keep 30 days' };

const ids: Record<string, string> = {};

beforeAll(async () => {
  const cw = engine();
  await cw.migrate();
  const worker = await cw.startWorker({ queues: ['q-retention'], concurrency: 4 });
  // Today (the first partition): one finished, one waiting for its event (live).
  ids.todayDone = await submitOnDay(cw, 0, note.name, { n: 1 });
  ids.todayLive = await submitOnDay(cw, 0, approval.name, { key: 'today' });
  // Day +2: two finished. Day +3: one finished, one live. Day +4: finished later (too young).
  ids.freeA = await submitOnDay(cw, 2, note.name, { n: 2 });
  ids.freeB = await submitOnDay(cw, 2, note.name, { n: 3 });
  ids.mixedDone = await submitOnDay(cw, 3, note.name, { n: 4 });
  ids.mixedLive = await submitOnDay(cw, 3, approval.name, { key: 'mixed' });
  await untilSucceeded(url(), [ids.todayDone, ids.freeA, ids.freeB, ids.mixedDone] as string[]);
  await worker.stop();
  // Forty days on; the young one finishes then. With a 30-day age the cutoff is day +10.
  await setDatabaseClockOffset(url(), 40 * dayMs);
  const later = await cw.startWorker({ queues: ['q-retention'], concurrency: 4 });
  ids.young = await submitOnDay(cw, 4, note.name, { n: 5 });
  await untilSucceeded(url(), [ids.young as string]);
  await later.stop();
  await cw.close();
}, 60_000);

afterAll(async () => {
  await setDatabaseClockOffset(url(), 0);
});

describe('purgeFinished', () => {
  it('puts each workflow log in the partition of its creation day', async () => {
    const partitions = await partitionsOf(url(), Object.values(ids));
    expect(partitions.get(ids.todayDone as string)).toBe('causeway_transitions_initial');
    expect(partitions.get(ids.freeA as string)).toBe(partitions.get(ids.freeB as string));
    expect(partitions.get(ids.freeA as string)).not.toBe(partitions.get(ids.mixedDone as string));
    expect(partitions.get(ids.mixedDone as string)).toBe(partitions.get(ids.mixedLive as string));
    expect([...partitions.values()]).not.toContain('causeway_transitions_default');
  });

  it('refuses bad input with invalid_request and changes nothing', async () => {
    const cw = engine();
    const before = await storedCounts(url());
    const bad: unknown[] = [
      { ...request, olderThanMs: -1 },
      { ...request, olderThanMs: Number.NaN },
      { ...request, olderThanMs: '30d' },
      { ...request, olderThanMs: 1.5 },
      { operator: request.operator, olderThanMs: 30 * dayMs },
      { ...request, reason: '   ', olderThanMs: 30 * dayMs },
      { reason: request.reason, olderThanMs: 30 * dayMs },
      { ...request, olderThanMs: 30 * dayMs, batchSize: 0 },
    ];
    for (const input of bad) {
      const error = await cw
        .purgeFinished(input as Parameters<Engine['purgeFinished']>[0])
        .catch((caught: unknown) => caught);
      expect(error, JSON.stringify(input)).toBeInstanceOf(EngineError);
      expect((error as EngineError).code).toBe('invalid_request');
    }
    expect(await storedCounts(url())).toEqual(before);
  });

  it('a dry run counts what would go and writes nothing', async () => {
    const cw = engine();
    const before = await storedCounts(url());
    const answer = await cw.purgeFinished({ ...request, olderThanMs: 30 * dayMs, dryRun: true });
    expect(answer.runId).toBeNull();
    expect(answer.workflowsRemoved).toBe(2);
    expect(answer.tasksRemoved).toBe(2);
    expect(answer.logRowsRemoved).toBeGreaterThan(0);
    expect(await storedCounts(url())).toEqual(before);
  });

  it('drops only fully finished old partitions and says what holds the others', async () => {
    const cw = engine();
    const partitions = await partitionsOf(url(), Object.values(ids));
    const answer = await cw.purgeFinished({ ...request, olderThanMs: 30 * dayMs, batchSize: 1 });
    const freePartition = partitions.get(ids.freeA as string) as string;
    expect(answer.partitionsDropped.map((partition) => partition.name)).toContain(freePartition);
    expect(answer.workflowsRemoved).toBe(2);
    const heldToday = answer.partitionsHeld.find((p) => p.name === 'causeway_transitions_initial');
    expect(heldToday?.liveWorkflows).toBe(1);
    expect(heldToday?.liveSample).toEqual([ids.todayLive]);
    expect(heldToday?.message).toContain(`1 live workflows: ${ids.todayLive}`);
    const mixed = answer.partitionsHeld.find(
      (p) => p.name === partitions.get(ids.mixedLive as string),
    );
    expect(mixed?.liveSample).toEqual([ids.mixedLive]);
    // Day +4 is older than the cutoff's day +10, but its workflow finished after the cutoff.
    const young = answer.partitionsHeld.find((p) => p.name === partitions.get(ids.young as string));
    expect(young?.youngSample).toEqual([ids.young]);

    const remaining = await query<{ id: string }>(url(), 'select id::text from causeway_workflows');
    expect(remaining.map((row) => row.id).sort()).toEqual(
      [ids.todayDone, ids.todayLive, ids.mixedDone, ids.mixedLive, ids.young].sort(),
    );
    const gone = await query(
      url(),
      'select 1 from causeway_tasks where workflow_id = any($1::uuid[])',
      [[ids.freeA, ids.freeB]],
    );
    expect(gone).toEqual([]);
    expect(await query(url(), 'select to_regclass($1) as t', [freePartition])).toEqual([
      { t: null },
    ]);
    expect(await logMismatches(url())).toEqual([]);
    expect(await parentMismatches(url())).toEqual([]);

    const [run] = await cw.retentionRuns();
    expect(run?.id).toBe(answer.runId);
    expect(run).toMatchObject({
      operator: request.operator,
      reason: request.reason,
      workflowsRemoved: 2,
    });

    // Idempotent: a second run finds nothing more to remove.
    const again = await cw.purgeFinished({ ...request, olderThanMs: 30 * dayMs });
    expect(again.workflowsRemoved).toBe(0);
    expect(again.partitionsDropped.filter((p) => p.workflows > 0)).toEqual([]);
  });

  it('leaves the log append-only and live work running to completion', async () => {
    const cw = engine();
    const day = (await partitionsOf(url(), [ids.mixedLive as string])).get(ids.mixedLive as string);
    for (const statement of [
      `delete from ${day}`,
      `truncate ${day}`,
      'truncate causeway_transitions_default',
      'update causeway_transitions set actor = actor',
      'delete from causeway_transitions',
      'truncate causeway_transitions',
      'truncate causeway_transitions_initial',
    ]) {
      await expect(query(url(), statement), statement).rejects.toThrow(/append-only/);
    }
    const worker = await cw.startWorker({ queues: ['q-retention'], concurrency: 4 });
    // A clock set back to the dropped day: its id falls in no partition, so the default one
    // takes its rows, and it runs like any other.
    const skewed = await submitOnDay(cw, 2, note.name, { n: 10 });
    await cw.sendEvent('retention.approved', 'today', {});
    await cw.sendEvent('retention.approved', 'mixed', {});
    const fresh = (await cw.submit(note.name, { n: 6 })).workflow.id;
    await untilSucceeded(url(), [ids.todayLive, ids.mixedLive, fresh, skewed] as string[]);
    await worker.stop();
    expect((await partitionsOf(url(), [skewed])).get(skewed)).toBe('causeway_transitions_default');
    const answer = await cw.purgeFinished({ ...request, olderThanMs: 30 * dayMs, dryRun: true });
    expect(answer.defaultPartition.workflows).toBe(1);
    expect(await logMismatches(url())).toEqual([]);
    expect(await parentMismatches(url())).toEqual([]);
  });

  it('keeps the metrics reader and a log cursor in id order across partitions', async () => {
    const cw = engine();
    const readModel = createReadModel(cw.db);
    const edgeReader = readModel.transitionEdgeReader();
    const logReader = readModel.transitionLogReader();
    await Promise.all([edgeReader.start(), logReader.start()]);
    const worker = await cw.startWorker({ queues: ['q-retention'], concurrency: 4 });
    const fresh = [
      await submitOnDay(cw, 5, note.name, { n: 7 }),
      await submitOnDay(cw, 0, note.name, { n: 8 }),
      await submitOnDay(cw, 5, note.name, { n: 9 }),
    ];
    await untilSucceeded(url(), fresh);
    await worker.stop();
    const expected = await query<{ id: string; workflow_id: string }>(
      url(),
      'select id::text, workflow_id::text from causeway_transitions where workflow_id = any($1::uuid[]) order by id',
      [fresh],
    );
    const edges: string[] = [];
    const rows: { id: string; workflowId: string }[] = [];
    await waitFor(async () => {
      edges.push(...(await edgeReader.read(100)).map((edge) => edge.id));
      rows.push(...(await logReader.read(100)));
      return rows.length >= expected.length && edges.length >= expected.length;
    });
    expect(rows.map((row) => row.id)).toEqual(expected.map((row) => row.id));
    expect(edges).toEqual(expected.map((row) => row.id));
  });
});
