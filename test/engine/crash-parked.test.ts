import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { spawnFixture } from './fixtures/children';
import { parkedWorkflows } from './fixtures/parked-workflows';
import { expectLogIsSound } from './semantics-support';

/**
 * A worker SIGKILLed while its work is parked changes nothing (R36, R37): a snoozed step and
 * a waiting event step hold no lease, so no sweep ends them and nothing runs twice; the
 * snooze runs when it is due, with its checkpoint, and the wait ends with its event.
 */
const database = useTestDatabase();
const url = () => database().url;
const leaseMs = 600;

interface Row extends Record<string, unknown> {
  step: string;
  state: string;
  lease_holder: string | null;
  lease_expires_at: Date | null;
  attempt: number;
}

const rowsOf = (workflowIds: string[]) =>
  query<Row>(
    url(),
    `select step, state, lease_holder, lease_expires_at, attempt from causeway_tasks
      where workflow_id = any($1::uuid[]) and step in ('poll', 'approval') order by step`,
    [workflowIds],
  );

describe('a worker killed while its work is parked', () => {
  it('leaves a snoozed and a waiting task as they were: no lease, no edge, nothing run twice', async () => {
    const engine = testEngine(url(), { workflows: parkedWorkflows, leaseMs });
    await engine.migrate();
    const child = spawnFixture('parked-worker.ts', {
      CAUSEWAY_CHILD_DATABASE_URL: url(),
      CAUSEWAY_CHILD_LEASE_MS: String(leaseMs),
    });
    await child.ready(60_000);
    const snoozed = await engine.submit('parked-snooze', { label: 's' });
    const waiting = await engine.submit('parked-wait', { label: 'w' });
    const ids = [snoozed.workflow.id, waiting.workflow.id];
    await waitFor(
      async () => {
        const rows = await rowsOf(ids);
        return rows.length === 2 && rows.every((row) => ['queued', 'waiting'].includes(row.state));
      },
      { timeoutMs: 20_000, description: 'the child parked both tasks' },
    );
    const parked = await rowsOf(ids);
    expect(parked).toEqual([
      {
        step: 'approval',
        state: 'waiting',
        lease_holder: null,
        lease_expires_at: null,
        attempt: 0,
      },
      { step: 'poll', state: 'queued', lease_holder: null, lease_expires_at: null, attempt: 0 },
    ]);
    const edgesBefore = await query<{ n: number }>(
      url(),
      'select count(*)::int as n from causeway_transitions',
    );
    await child.kill();
    // Well past any lease the child held: a sweep finds nothing of theirs to end.
    await setDatabaseClockOffset(url(), 10 * leaseMs);
    expect(await engine.sweep()).toBe(0);
    expect(await rowsOf(ids)).toEqual(parked);
    const edgesAfter = await query<{ n: number }>(
      url(),
      'select count(*)::int as n from causeway_transitions',
    );
    expect(edgesAfter).toEqual(edgesBefore);

    // The wait ends with its event; the snooze runs when due, with its checkpoint, once.
    const answer = await engine.sendEvent('parked.approved', 'w', { ok: true });
    expect(answer.tasks.map((task) => task.state)).toEqual(['succeeded']);
    const worker = await engine.startWorker({ concurrency: 1 });
    await setDatabaseClockOffset(url(), 601_000);
    await waitFor(async () => {
      const rows = await query<{ state: string }>(
        url(),
        'select state from causeway_workflows where id = $1',
        [snoozed.workflow.id],
      );
      return rows[0]?.state === 'succeeded';
    });
    await worker.stop();
    const output = await query<{ output: unknown }>(
      url(),
      `select output from causeway_tasks where workflow_id = $1 and step = 'poll'`,
      [snoozed.workflow.id],
    );
    expect(output[0]?.output).toEqual({ job: 'job-s', attempt: 1 });
    const claims = await query<{ n: number }>(
      url(),
      `select count(*)::int as n from causeway_transitions
        where workflow_id = $1 and task_id is not null and reason = 'lease_acquired'`,
      [snoozed.workflow.id],
    );
    expect(claims[0]?.n).toBe(2);
    await setDatabaseClockOffset(url(), 0);
    await expectLogIsSound(url());
  }, 60_000);
});
