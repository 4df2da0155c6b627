/**
 * The lock orders of child workflows meet head on: a child's end holds the child workflow and
 * then locks its parent (to move the step's tally, R45); a cancel of the parent holds the
 * parent and then locks its unfinished children (R46). PostgreSQL breaks the cycle by aborting
 * one transaction (40P01). Here the cancel is made the one aborted, deterministically: it waits
 * on the child first, so its deadlock check runs first. The cancel must then be tried again,
 * not answered with the deadlock: a caller's cancel is never lost to the engine's own locks.
 */
import { workflow } from '@causeway/workflow';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { startChildren } from './children-support';

const database = useTestDatabase();

let release: () => void = () => {};
const held = new Promise<void>((resolve) => {
  release = resolve;
});

const child = workflow({ name: 'deadlock-child', input: z.object({}) })
  .step('work', { queue: 'deadlock', run: () => held })
  .build();
const parent = workflow({ name: 'deadlock-parent', input: z.object({}) })
  .step('fan', { queue: 'deadlock', run: () => startChildren(child, [{}]) })
  .build();

/** Backends of this database waiting for a lock. */
async function lockWaits(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`,
  );
  return rows[0]?.n ?? 0;
}

describe('a cancel of the parent and its child ending, locking in opposite orders', () => {
  it('the cancel is tried again after PostgreSQL aborts it for a deadlock', async () => {
    const url = database().url;
    const engine = testEngine(url, { workflows: [child, parent] });
    await engine.migrate();
    const worker = await engine.startWorker({ queues: ['deadlock'], concurrency: 2 });
    const { workflow: submitted } = await engine.submit('deadlock-parent', {});
    // The child runs (its handler waits), its parent step awaits it.
    const childId = await waitFor(async () => {
      const rows = await query<{ id: string }>(
        url,
        `select w.id from causeway_workflows as w join causeway_tasks as t on t.workflow_id = w.id
          where w.parent_workflow_id = $1 and t.state = 'leased'`,
        [submitted.id],
      );
      return rows[0]?.id;
    });

    // A transaction that ends the child as the engine does: the child first, then its parent.
    const ending = new pg.Client({ connectionString: url });
    const watcher = new pg.Client({ connectionString: url });
    await Promise.all([ending.connect(), watcher.connect()]);
    try {
      await ending.query('begin');
      await ending.query('select id from causeway_workflows where id = $1 for update', [childId]);
      const cancel = engine.cancelWorkflow(submitted.id, { reason: 'deadlock' }).then(
        (answer) => ({ answer }),
        (error: unknown) => ({ error }),
      );
      // The cancel holds the parent and waits for the child ...
      await waitFor(async () => (await lockWaits(watcher)) === 1);
      // ... which now waits for the parent: PostgreSQL aborts the cancel, the first waiter.
      const parentLock = ending.query(
        'select id from causeway_workflows where id = $1 for update',
        [submitted.id],
      );
      await parentLock;
      await ending.query('rollback');
      expect(await cancel).toEqual({
        answer: { workflowId: submitted.id, state: 'cancel_requested', changed: true },
      });
    } finally {
      await ending.end();
      await watcher.end();
    }
    release();
    const done = await waitFor(async () => {
      const found = await engine.getWorkflow(submitted.id);
      return found?.state === 'succeeded' || found?.state === 'cancelled' ? found : undefined;
    });
    await worker.stop();
    // The child had started its effect (it was running): it succeeded after the cancel.
    expect(done.tasks[0]?.transitions.map((row) => row.reason)).toEqual([
      'submitted',
      'lease_acquired',
      'children_started',
      'cancel_requested',
      'cancel_after_submit',
    ]);
    expect(await logMismatches(url)).toEqual([]);
  });
});
